#pragma once
// A sweep's scheduler: successive halving, which stops the trials that lose at a rung so that the
// sweep's compute goes to the good ones (study/sweep/rungs.h applies it):
//
//   "scheduler": {"type": "asha", "metric": "val_accuracy", "mode": "max",
//                 "grace_epochs": 1, "reduction_factor": 3, "max_epochs": 27}
//
// A trial's rungs are at grace_epochs * reduction_factor^k epochs (1, 3, 9 above), those under
// max_epochs; at each it is kept or stopped by the metric it reached there against the trials
// before it in the sweep (their index order, not the order the machine happens to finish them in,
// so that every mode, and a resumed run, makes the same decisions):
//   asha                Ray Tune's ASHAScheduler (Li et al., MLSys 2020): stopped when the metric
//   is
//                       worse than the (1 - 1/reduction_factor) quantile (linearly interpolated, as
//                       numpy.percentile) of the earlier trials' at that rung; the first goes on.
//   successive_halving  Optuna's SuccessiveHalvingPruner: kept when the metric is among the best
//                       floor(n / reduction_factor) of the n trials at that rung so far, itself
//                       included (the best one where that is none).
//   hyperband           Ray Tune's asynchronous Hyperband (ASHA with brackets): trial i is in
//                       bracket i mod B, B = floor(log_rf(max_epochs / grace_epochs)) + 1, bracket
//                       b's rungs start at grace_epochs * reduction_factor^b, and trials compete
//                       within their bracket by asha's rule; the last bracket has no rung (every
//                       trial trains in full). Keras Tuner's Hyperband is synchronous instead: it
//                       trains each bracket's trials to a rung together and continues the best from
//                       checkpoints.
// Defaults: metric val_loss (Keras Tuner's objective), mode as Keras's "auto" (max for an accuracy,
// else min), grace_epochs 1 (Ray's grace_period), reduction_factor 3 (Keras Tuner's factor; Ray's
// and Optuna's default is 4), max_epochs: the trials' own epochs (when given, it sets every trial's
// fit.epochs, as Keras Tuner's Hyperband does).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/spec.h"
#include "runtime/names.h"

namespace mf {

enum class SchedulerKind { asha, successive_halving, hyperband };
inline constexpr Named<SchedulerKind> kSchedulerNames[] = {
    {"asha", SchedulerKind::asha},
    {"successive_halving", SchedulerKind::successive_halving},
    {"hyperband", SchedulerKind::hyperband}};
inline const char* to_string(SchedulerKind k) { return name_of(kSchedulerNames, k); }

struct SchedulerSpec {
  SchedulerKind type = SchedulerKind::asha;
  // what a callback monitors: "loss", "val_loss", a metric or "val_" and it
  std::string metric = "val_loss";
  MonitorMode mode = MonitorMode::automatic;
  // the mode resolved ("auto" by Keras's rule, against the models, by load_sweep)
  bool maximize = false;
  int grace_epochs = 1, reduction_factor = 3;
  // the trials' epochs: the file's max_epochs, else the largest trial's (set by load_sweep)
  int max_epochs = 0;

  // Its brackets (1 but for hyperband), trial `trial`'s bracket, and a bracket's rungs: the epochs
  // (from 1) at which its trials are judged, ascending, each under max_epochs.
  int brackets() const;
  int bracket_of(size_t trial) const { return int(trial % size_t(brackets())); }
  std::vector<int> rungs(int bracket) const;
  // Whether trial `trial` is judged after `epochs` epochs: one of its bracket's rungs.
  bool is_rung(size_t trial, int epochs) const;
};

// The "scheduler" object of sweep file `path`, structure only: its metric's mode and max_epochs are
// resolved against the models by load_sweep. A bad key, type, mode or number is a UserError naming
// the file, the JSON path and what is allowed. `file_max_epochs` gets the file's max_epochs, if
// any.
SchedulerSpec parse_scheduler(const std::string& path, const nlohmann::json& object,
                              std::optional<int>* file_max_epochs);

// As JSON and back, resolved (mode "max" or "min", max_epochs set): what a processes-mode child is
// sent.
void to_json(nlohmann::json& json, const SchedulerSpec& spec);
void from_json(const nlohmann::json& json, SchedulerSpec& spec);

}  // namespace mf
