// EarlyStopping and ReduceLROnPlateau against Keras 3's rules
// (keras/src/callbacks/early_stopping.py, reduce_lr_on_plateau.py), epoch by epoch on hand-made
// sequences of monitored values, and through fit: a stopped fit's epochs, its restored weights and
// the rates it trained at.
#include "nn/callbacks.h"

#include <cmath>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.h"
#include "data/dataset.h"
#include "nn/fit.h"
#include "test_support.h"

namespace mf {
namespace {

ModelSpec classifier() {
  ModelSpec spec = test::mlp(6, {{8, Activation::tanh}, {3, Activation::softmax}},
                             Loss::sparse_categorical_crossentropy, "clf");
  spec.fit.batch_size = 32;
  spec.seed = 3;
  return spec;
}

// The epoch (from 0) after which EarlyStopping stops on `values`, or -1; and each epoch's best
// flag.
struct Stopping {
  int stop = -1;
  std::vector<bool> best;
};
Stopping early_stopping(const EarlyStoppingSpec& spec,
                        const std::vector<std::optional<double>>& values) {
  EarlyStopping callback(spec, classifier());
  Stopping run;
  for (int epoch = 0; epoch < int(values.size()); ++epoch) {
    const EarlyStopping::Decision d = callback.on_epoch_end(epoch, values[size_t(epoch)]);
    run.best.push_back(d.best);
    if (d.stop) {
      run.stop = epoch;
      break;
    }
  }
  return run;
}

TEST(EarlyStopping, StopsWhenPatienceEpochsInARowDoNotImprove) {
  EarlyStoppingSpec spec;
  spec.patience = 2;
  // 1.0 and 0.9 improve; 0.95 and 0.96 do not: the second of them ends it.
  const Stopping run = early_stopping(spec, {1.0, 0.9, 0.95, 0.96, 0.5});
  EXPECT_EQ(run.stop, 3);
  EXPECT_EQ(run.best, (std::vector<bool>{true, true, false, false}));
  // Patience 0 stops at the first epoch that does not improve, never at the first epoch.
  spec.patience = 0;
  EXPECT_EQ(early_stopping(spec, {1.0, 0.9, 0.9}).stop, 2);
  EXPECT_EQ(early_stopping(spec, {1.0}).stop, -1);
}

TEST(EarlyStopping, MinDeltaIsTheLeastImprovement) {
  EarlyStoppingSpec spec;
  spec.patience = 1, spec.min_delta = 0.1;
  // 0.85 beats 1.0 by more than 0.1, 0.8 not 0.85
  EXPECT_EQ(early_stopping(spec, {1.0, 0.85, 0.8}).stop, 2);
  spec.min_delta = -0.1;  // Keras takes its magnitude
  EXPECT_EQ(early_stopping(spec, {1.0, 0.95}).stop, 1);
}

TEST(EarlyStopping, AutoModeMaximizesAnAccuracy) {
  EarlyStoppingSpec spec;
  spec.monitor = "val_accuracy", spec.patience = 1;
  EXPECT_EQ(early_stopping(spec, {0.5, 0.6, 0.55}).stop, 2);
  spec.monitor = "val_loss";
  EXPECT_EQ(early_stopping(spec, {0.5, 0.6}).stop, 1);
  spec.mode = MonitorMode::max;
  EXPECT_EQ(early_stopping(spec, {0.5, 0.6, 0.7}).stop, -1);
}

// Keras 3's auto mode follows each metric's direction: up for precision and recall, down for the
// regression errors and the loss.
TEST(EarlyStopping, AutoModeMaximizesPrecisionAndRecallAndMinimizesErrors) {
  ModelSpec spec = classifier();
  spec.layers.back() = {3, Activation::sigmoid};
  spec.loss = Loss::binary_crossentropy, spec.targets = 3;
  spec.metrics = std::vector<MetricSpec>{{"precision", Metric::precision},
                                         {"rec", Metric::recall},
                                         {"mae", Metric::mean_absolute_error}};
  EXPECT_TRUE(Improvement(spec, "val_precision", MonitorMode::automatic, 0).maximizes());
  EXPECT_TRUE(Improvement(spec, "rec", MonitorMode::automatic, 0).maximizes());
  EXPECT_FALSE(Improvement(spec, "val_mae", MonitorMode::automatic, 0).maximizes());
  EXPECT_FALSE(Improvement(spec, "loss", MonitorMode::automatic, 0).maximizes());
}

TEST(EarlyStopping, ABaselineMustBeBeatenToRestartTheWait) {
  EarlyStoppingSpec spec;
  spec.patience = 2, spec.baseline = 0.5;
  // Each value improves on the best but not on the baseline: the wait goes on (1, 2, 3), and the
  // first epoch that does not improve, past patience, stops.
  EXPECT_EQ(early_stopping(spec, {1.0, 0.9, 0.8, 0.85}).stop, 3);
  // 0.4 beat it: wait 0 again
  EXPECT_EQ(early_stopping(spec, {1.0, 0.4, 0.45, 0.46, 0.47}).stop, 3);
}

TEST(EarlyStopping, StartFromEpochAndMissingValuesAreSkipped) {
  EarlyStoppingSpec spec;
  spec.patience = 1, spec.start_from_epoch = 2;
  const Stopping run = early_stopping(spec, {0.1, 0.1, 1.0, 1.1});
  EXPECT_EQ(run.stop, 3);
  EXPECT_EQ(run.best, (std::vector<bool>{false, false, true, false}));
  EXPECT_EQ(early_stopping(EarlyStoppingSpec{}, {std::nullopt, std::nullopt}).stop, -1);
}

// The rate after each epoch of `values`, from `rate`.
std::vector<float> reduced_rates(const ReduceLROnPlateauSpec& spec,
                                 const std::vector<double>& values, float rate) {
  ReduceLROnPlateau callback(spec, classifier());
  std::vector<float> rates;
  for (double v : values) {
    if (const std::optional<float> next = callback.on_epoch_end(v, rate)) rate = *next;
    rates.push_back(rate);
  }
  return rates;
}

TEST(ReduceLROnPlateau, ReducesAfterPatienceThenCoolsDownAndStopsAtMinLr) {
  ReduceLROnPlateauSpec spec;
  spec.patience = 2, spec.factor = 0.5, spec.cooldown = 1, spec.min_lr = 0.1;
  // A plateau: wait 1, 2 -> reduce; a cooldown epoch (wait 0, then 1 as Keras counts it), 2 ->
  // reduce.
  const std::vector<float> rates = reduced_rates(spec, std::vector<double>(11, 1.0), 1.f);
  const std::vector<float> want = {
      1.f,    1.f,    0.5f,       0.5f,       0.25f,     0.25f,
      0.125f, 0.125f, float(0.1), float(0.1), float(0.1)};  // max(0.0625, min_lr)
  EXPECT_EQ(rates, want);
}

TEST(ReduceLROnPlateau, AnImprovementByMinDeltaRestartsTheWait) {
  ReduceLROnPlateauSpec spec;
  spec.patience = 1, spec.factor = 0.1;  // min_delta 1e-4
  EXPECT_EQ(reduced_rates(spec, {1.0, 0.9, 0.89995}, 1.f),
            (std::vector<float>{1.f, 1.f, float(1.0 * 0.1)}));
}

// ---- Through fit ------------------------------------------------------------------------------

struct Fitted {
  FitResult result;
  std::vector<float> weights;
  Evaluation test;  // on every row, after the fit
};
Fitted fit_model(const ModelSpec& spec, const DataSplit& data, const FitOptions& options = {}) {
  CpuBackend cpu;
  DeviceData resident(cpu, data.train);
  Model model(spec, cpu);
  Fitted f{fit(model, resident, options), {}, {}};
  f.weights = model.get_weights();
  f.test = evaluate(model, resident, 0, resident.rows());
  return f;
}

TEST(FitCallbacks, EarlyStoppingEndsTheFitAndRestoresTheBestWeights) {
  const DataSplit data = make_synthetic("teacher:rows=200,features=6,classes=3,seed=4");
  ModelSpec spec = classifier();
  spec.fit.epochs = 10;
  // "loss" in max mode: a training loss that falls never improves after the first epoch, so the
  // fit stops after epoch 1 + patience, and the first epoch's weights are the best.
  EarlyStoppingSpec stopping;
  stopping.monitor = "loss", stopping.mode = MonitorMode::max, stopping.patience = 2;
  stopping.restore_best_weights = true;
  spec.fit.early_stopping = stopping;
  const Fitted stopped = fit_model(spec, data);
  ASSERT_EQ(stopped.result.epochs.size(), 3u);
  EXPECT_EQ(stopped.result.status, FitStatus::ok);
  EXPECT_EQ(stopped.result.stopped_epoch, 3);
  EXPECT_EQ(stopped.result.restored_epoch, 1);
  EXPECT_FALSE(stopped.result.stop_reason.empty());
  // The weights after one epoch of the same model.
  ModelSpec one = spec;
  one.fit.epochs = 1, one.fit.early_stopping.reset();
  const Fitted first = fit_model(one, data);
  EXPECT_EQ(stopped.weights, first.weights);
  EXPECT_EQ(stopped.result.epochs[0].loss, first.result.epochs[0].loss);
  // A model evaluated after its fit stopped is evaluated, with the weights it ended with.
  EXPECT_EQ(stopped.test.loss, first.test.loss);
  EXPECT_GT(stopped.test.loss, 0);
  // Without restore_best_weights it keeps the last epoch's.
  spec.fit.early_stopping->restore_best_weights = false;
  const Fitted last = fit_model(spec, data);
  EXPECT_EQ(last.result.restored_epoch, std::nullopt);
  EXPECT_NE(last.weights, first.weights);
}

TEST(FitCallbacks, ReduceLROnPlateauLowersTheRateTheNextEpochTrainsAt) {
  const DataSplit data = make_synthetic("teacher:rows=200,features=6,classes=3,seed=4");
  ModelSpec spec = classifier();
  spec.fit.epochs = 4;
  ReduceLROnPlateauSpec reduce;
  reduce.monitor = "loss", reduce.mode = MonitorMode::max, reduce.patience = 1, reduce.factor = 0.5;
  spec.fit.reduce_lr_on_plateau = reduce;
  const Fitted f = fit_model(spec, data);
  ASSERT_EQ(f.result.epochs.size(), 4u);
  // Epoch 1 is the best; each later one waits 1 and halves the rate the next trains at.
  const float rate = spec.optimizer.learning_rate;
  EXPECT_EQ(f.result.epochs[0].learning_rate, rate);
  EXPECT_EQ(f.result.epochs[1].learning_rate, rate);
  EXPECT_EQ(f.result.epochs[2].learning_rate, float(double(rate) * 0.5));
  EXPECT_EQ(f.result.epochs[3].learning_rate, float(double(float(double(rate) * 0.5)) * 0.5));
}

// FitOptions::epoch_end (the Python package's Callback subclasses): called after each epoch with
// its metrics; true stops the fit there, ok, with the weights of that epoch.
TEST(FitCallbacks, AnEpochEndHookSeesEachEpochAndStopsTheFit) {
  const DataSplit data = make_synthetic("teacher:rows=200,features=6,classes=3,seed=4");
  ModelSpec spec = classifier();
  spec.fit.epochs = 6;
  std::vector<int> seen;
  std::vector<double> losses;
  FitOptions options;
  options.epoch_end = [&](int member, int epoch, const EpochMetrics& e, bool ended) {
    EXPECT_EQ(member, 0);
    EXPECT_FALSE(ended);
    seen.push_back(epoch), losses.push_back(e.loss);
    return epoch == 1;
  };
  const Fitted stopped = fit_model(spec, data, options);
  EXPECT_EQ(seen, (std::vector<int>{0, 1}));
  ASSERT_EQ(stopped.result.epochs.size(), 2u);
  EXPECT_EQ(losses[1], stopped.result.epochs[1].loss);
  EXPECT_EQ(stopped.result.status, FitStatus::ok);
  EXPECT_EQ(stopped.result.stopped_epoch, 2);
  EXPECT_EQ(stopped.result.stop_reason, "a callback stopped training");
  ModelSpec two = spec;
  two.fit.epochs = 2;
  EXPECT_EQ(stopped.weights, fit_model(two, data).weights);

  // The epoch after which EarlyStopping ends the fit reaches the hook too, as ended.
  EarlyStoppingSpec stopping;
  stopping.monitor = "loss", stopping.mode = MonitorMode::max, stopping.patience = 2;
  spec.fit.early_stopping = stopping;
  std::vector<bool> ends;
  options.epoch_end = [&](int, int, const EpochMetrics&, bool ended) {
    ends.push_back(ended);
    return false;
  };
  EXPECT_EQ(fit_model(spec, data, options).result.epochs.size(), 3u);
  EXPECT_EQ(ends, (std::vector<bool>{false, false, true}));
}

}  // namespace
}  // namespace mf
