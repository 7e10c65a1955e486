#pragma once
// Long C++ work (a fit, a run) from Python without holding the interpreter, and with Ctrl-C: the
// work runs on the calling thread with the GIL released, while SIGINT (Ctrl-C in a terminal, a
// notebook's interrupt) is this binding's: it calls `stop`, which asks the work to end after its
// current step. Python's own handler is put back when the work returns, and an interrupted call
// raises KeyboardInterrupt: the process stays usable. Off the main thread, where Python delivers no
// signal either, SIGINT is left as it is.
#include <atomic>
#include <csignal>
#include <functional>

#include <nanobind/nanobind.h>

namespace mfpy {

namespace detail {
inline std::atomic<bool> interrupted{false};
inline const std::function<void()>* stop_work = nullptr;  // the running work's stop, while it runs
inline unsigned long main_thread = 0;                     // Python's main thread (set at import)
extern "C" inline void on_sigint(int) {
  interrupted = true;
  if (stop_work) (*stop_work)();  // sets an atomic flag: safe in a handler
}
}  // namespace detail

// Call once, from the main thread, when the module is imported.
inline void remember_main_thread() { detail::main_thread = PyThread_get_thread_ident(); }

template <class Result>
Result run_interruptible(const std::function<Result()>& work, const std::function<void()>& stop) {
  namespace nb = nanobind;
  const bool main_thread = PyThread_get_thread_ident() == detail::main_thread;
  struct sigaction python_handler {};
  if (main_thread) {
    detail::interrupted = false;
    detail::stop_work = &stop;
    struct sigaction mine {};
    mine.sa_handler = detail::on_sigint;
    sigemptyset(&mine.sa_mask);
    sigaction(SIGINT, &mine, &python_handler);
  }
  const auto interrupted = [&] {  // Python's handler back; whether Ctrl-C came
    if (!main_thread) return false;
    sigaction(SIGINT, &python_handler, nullptr);
    detail::stop_work = nullptr;
    return detail::interrupted.load();
  };
  const auto keyboard_interrupt = [] {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    return nb::python_error();
  };
  Result result;
  try {
    nb::gil_scoped_release released;
    result = work();
  } catch (...) {
    // what the work threw after the stop is not the news
    if (interrupted()) throw keyboard_interrupt();
    throw;
  }
  if (interrupted()) throw keyboard_interrupt();
  return result;
}

}  // namespace mfpy
