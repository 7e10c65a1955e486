#include "runtime/interrupt.h"

#include <csignal>

namespace mf {
namespace {

std::atomic<bool> stop_requested{false};
std::atomic<bool> embedded{false};

extern "C" void on_interrupt(int signal) {
  if (stop_requested.exchange(true)) {  // asked twice: stop now, the default way
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
}

}  // namespace

const std::atomic<bool>& stop_on_interrupt() {
  static const bool installed = [] {
    if (embedded) return false;
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    return true;
  }();
  (void)installed;
  return stop_requested;
}

void leave_signals_to_embedder() { embedded = true; }
void request_stop() { stop_requested = true; }
void clear_stop() { stop_requested = false; }

}  // namespace mf
