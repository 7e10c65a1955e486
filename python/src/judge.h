#pragma once
// Python called from a run's training threads, with the GIL taken back: the first exception it
// raises stops the run, as Ctrl-C does, and is raised again once the run has ended (FirstRaised);
// and a Python object as the run's judge of its trials (nn/fit.h's RungJudge; study/job.h's
// RunOptions::judge), the pruner of multifit.integration.optuna. The judge object has `metric`
// (what it rules by, a monitor's name: "val_loss"), `name` (who stops a trial, as its stop_reason
// says) and `judge(trial, epochs, value)`, which returns whether the trial (its place in the sweep)
// stops after that many epochs; value is None where the trial has no such metric. It is called
// once per trial and epoch but the trial's last.
#include <optional>
#include <string>

#include <nanobind/nanobind.h>

#include "nn/fit.h"

namespace mfpy {

// The first exception the run's Python callbacks raised. Touched with the GIL held only.
class FirstRaised {
 public:
  bool any() const { return raised_.has_value(); }
  void keep(nanobind::python_error&& error);  // the first only; stops the run (request_stop)
  void raise_if_any();                        // after the run
 private:
  std::optional<nanobind::python_error> raised_;
};

class PythonJudge final : public mf::RungJudge {
 public:
  PythonJudge(nanobind::object judge, FirstRaised& raised);
  const std::string& metric() const override { return metric_; }
  std::string name() const override { return name_; }
  bool judges(size_t, int) const override { return true; }
  Verdict judge(size_t trial, int epochs, std::optional<double> value) override;
  Verdict verdict(size_t, int) override { return Verdict::go_on; }  // judge() always decides
  void wait(double) override {}
  void ended(size_t) override {}

 private:
  nanobind::object judge_;
  std::string metric_, name_;
  FirstRaised& raised_;
};

}  // namespace mfpy
