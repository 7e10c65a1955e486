#pragma once
// Keras 3's EarlyStopping and ReduceLROnPlateau as fit runs them at each epoch's end, one of each
// per model (or pack member), by Keras's rules (keras/src/callbacks/early_stopping.py,
// reduce_lr_on_plateau.py, monitor_callback.py): a value improves on the best when it is better by
// more than min_delta (lower for "min", higher for "max"; "auto" is max for an accuracy and min for
// the rest); the first value always does.
#include <optional>
#include <string>
#include <vector>

#include "nn/spec.h"

namespace mf {

struct EpochMetrics;

// The value a callback monitors in an epoch's metrics ("loss", "val_loss", a metric's name or
// "val_" and it); nullopt where the epoch has none (no validation rows).
std::optional<double> monitored(const ModelSpec& spec, const std::string& monitor,
                                const EpochMetrics& epoch);

class Improvement {
 public:
  Improvement(const ModelSpec& spec, const std::string& monitor, MonitorMode mode,
              double min_delta);
  // Whether `value` improves on `reference` (always, where there is none yet).
  bool operator()(double value, std::optional<double> reference) const;
  bool maximizes() const { return maximizes_; }

 private:
  bool maximizes_;
  double min_delta_;  // |min_delta|, against the improvement's direction
};

class EarlyStopping {
 public:
  EarlyStopping(const EarlyStoppingSpec& spec, const ModelSpec& model);
  struct Decision {
    // this epoch's weights are the best so far: keep them (restore_best_weights)
    bool best = false;
    bool stop = false;  // patience ran out: training ends after this epoch
  };
  // After epoch `epoch` (from 0) with the monitored value (nullopt: none this epoch, nothing
  // changes).
  Decision on_epoch_end(int epoch, std::optional<double> value);
  const EarlyStoppingSpec& spec() const { return spec_; }
  std::optional<double> best() const { return best_; }
  int best_epoch() const { return best_epoch_; }  // from 0
  int wait() const { return wait_; }

 private:
  EarlyStoppingSpec spec_;
  Improvement improves_;
  std::optional<double> best_;
  int best_epoch_ = 0, wait_ = 0;
  bool seen_ = false;  // a value was monitored (the best weights are then the first kept)
};

class ReduceLROnPlateau {
 public:
  ReduceLROnPlateau(const ReduceLROnPlateauSpec& spec, const ModelSpec& model);
  // After an epoch with the monitored value and the rate it trained at: the new rate, where
  // patience ran out outside a cooldown and the rate is above min_lr.
  std::optional<float> on_epoch_end(std::optional<double> value, float rate);
  const ReduceLROnPlateauSpec& spec() const { return spec_; }

 private:
  ReduceLROnPlateauSpec spec_;
  Improvement improves_;
  std::optional<double> best_;
  int wait_ = 0, cooldown_ = 0;
};

}  // namespace mf
