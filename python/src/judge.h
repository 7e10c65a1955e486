#pragma once
// A Python object as a run's judge of its trials (nn/fit.h's RungJudge; study/job.h's
// RunOptions::judge): the pruner of multifit.integration.optuna. The object has `metric` (what it
// rules by, a monitor's name: "val_loss"), `name` (who stops a trial, as its stop_reason says) and
// `judge(trial, epochs, value)`, which returns whether the trial (its place in the sweep) stops
// after that many epochs; value is None where the trial has no such metric. It is called from the
// training threads with the GIL taken back, once per trial and epoch but the trial's last. An
// exception it raises stops the run, as Ctrl-C does, and is raised again once the run has ended.
#include <mutex>
#include <optional>
#include <string>

#include <nanobind/nanobind.h>

#include "nn/fit.h"

namespace mfpy {

class PythonJudge final : public mf::RungJudge {
 public:
  explicit PythonJudge(nanobind::object judge);
  const std::string& metric() const override { return metric_; }
  std::string name() const override { return name_; }
  bool judges(size_t, int) const override { return true; }
  Verdict judge(size_t trial, int epochs, std::optional<double> value) override;
  Verdict verdict(size_t, int) override { return Verdict::go_on; }  // judge() always decides
  void wait(double) override {}
  void ended(size_t) override {}
  // With the GIL held, after the run: what judge() raised, if anything.
  void raise_if_raised();

 private:
  nanobind::object judge_;
  std::string metric_, name_;
  std::mutex mutex_;  // raised_: the training threads
  std::optional<nanobind::python_error> raised_;
};

}  // namespace mfpy
