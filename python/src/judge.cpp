#include "judge.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "runtime/interrupt.h"

namespace nb = nanobind;

namespace mfpy {

void FirstRaised::keep(nb::python_error&& error) {
  if (!raised_) raised_.emplace(std::move(error));
  mf::request_stop();
}

void FirstRaised::raise_if_any() {
  if (!raised_) return;
  nb::python_error error = std::move(*raised_);
  raised_.reset();
  throw error;
}

PythonJudge::PythonJudge(nb::object judge, FirstRaised& raised)
    : judge_(std::move(judge)),
      metric_(nb::cast<std::string>(judge_.attr("metric"))),
      name_(nb::cast<std::string>(judge_.attr("name"))),
      raised_(raised) {}

mf::RungJudge::Verdict PythonJudge::judge(size_t trial, int epochs, std::optional<double> value) {
  nb::gil_scoped_acquire held;
  if (raised_.any()) return Verdict::go_on;  // the run is stopping
  try {
    const nb::object stop = judge_.attr("judge")(trial, epochs, value);
    const int truth = PyObject_IsTrue(stop.ptr());  // any truth value (a numpy bool too)
    if (truth < 0) throw nb::python_error();
    return truth ? Verdict::stop : Verdict::go_on;
  } catch (nb::python_error& error) {
    raised_.keep(std::move(error));
    return Verdict::go_on;
  }
}

}  // namespace mfpy
