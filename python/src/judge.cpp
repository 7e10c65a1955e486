#include "judge.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "runtime/interrupt.h"

namespace nb = nanobind;

namespace mfpy {

PythonJudge::PythonJudge(nb::object judge)
    : judge_(std::move(judge)),
      metric_(nb::cast<std::string>(judge_.attr("metric"))),
      name_(nb::cast<std::string>(judge_.attr("name"))) {}

mf::RungJudge::Verdict PythonJudge::judge(size_t trial, int epochs, std::optional<double> value) {
  nb::gil_scoped_acquire held;
  try {
    const nb::object stop = judge_.attr("judge")(trial, epochs, value);
    const int truth = PyObject_IsTrue(stop.ptr());  // any truth value (a numpy bool too)
    if (truth < 0) throw nb::python_error();
    return truth ? Verdict::stop : Verdict::go_on;
  } catch (nb::python_error& error) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!raised_) raised_.emplace(std::move(error));
    }
    mf::request_stop();
    return Verdict::go_on;
  }
}

void PythonJudge::raise_if_raised() {
  if (raised_) {
    nb::python_error error = std::move(*raised_);
    raised_.reset();
    throw error;
  }
}

}  // namespace mfpy
