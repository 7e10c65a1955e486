#pragma once
// Keras's fit and evaluate: shuffle every epoch, validation_split taken from the
// last rows before shuffling, the last partial batch kept, one progress line
// per epoch. The host waits only at the end of an epoch to read its metrics.
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nn/callbacks.h"
#include "nn/device_data.h"
#include "nn/epoch_iterator.h"
#include "nn/model.h"
#include "runtime/clock.h"
#include "runtime/names.h"
#include "runtime/timeline.h"

namespace mf {

struct EpochMetrics {
  // accuracy: the model's first accuracy metric; NaN without one
  double loss = NAN, accuracy = NAN;
  double val_loss = NAN, val_accuracy = NAN;  // NaN without validation rows
  double seconds = 0, samples_per_s = 0;
  // With an input pipeline (preprocessing), else 0: how long the training loop waited for its
  // batches, and how long the pipeline's workers spent preparing them (summed over workers), in
  // seconds.
  double input_wait_s = 0, input_busy_s = 0;
  // Every metric of the spec's (ModelSpec::metric_list), in its order; and on the validation rows
  // (empty without them).
  std::vector<double> metrics, val_metrics;
  double learning_rate = NAN;  // the rate it trained at, with ReduceLROnPlateau; NaN without
};

struct Evaluation {
  double loss = NAN, accuracy = NAN;
  std::vector<double> metrics;  // every metric of the spec's, in its order
};

enum class FitStatus { ok, diverged, stopped };
inline constexpr Named<FitStatus> kFitStatusNames[] = {
    {"ok", FitStatus::ok}, {"diverged", FitStatus::diverged}, {"stopped", FitStatus::stopped}};

// A scheduler's verdict on a member at one of its rungs (nn/scheduler_spec.h).
struct RungResult {
  int epochs = 0;      // the rung: after this many epochs (from 1)
  double value = NAN;  // the scheduler's metric there (NaN: it had none)
  bool kept = true;    // false: it stopped there
};

// A scheduler's say at its rungs (study/sweep/rungs.h decides), about trials: the models of a run,
// each known by its place in the sweep. Asked after an epoch, for each member still training, only
// where judges() says a rung is. A verdict may wait for other trials (those before it in the sweep
// that have not reached the rung yet): then judge() says undecided, and verdict() is asked again
// until it decides. Thread-safe: the fits of a run share one.
class RungJudge {
 public:
  enum class Verdict { go_on, stop, undecided };
  virtual ~RungJudge() = default;
  virtual const std::string& metric() const = 0;  // what it ranks by, as a callback's monitor
  // Who stops a trial, as its stop_reason says it ("the scheduler: val_loss 0.52 lost at its rung
  // after epoch 2").
  virtual std::string name() const { return "the scheduler"; }
  virtual bool judges(size_t trial, int epochs) const = 0;
  // The trial's metric after `epochs` epochs, recorded (nullopt: it has none, and ranks last).
  virtual Verdict judge(size_t trial, int epochs, std::optional<double> value) = 0;
  virtual Verdict verdict(size_t trial, int epochs) = 0;  // without waiting
  virtual void wait(double timeout_s) = 0;  // until a verdict may have changed, or the timeout
  virtual void ended(size_t trial) = 0;     // it trains no more, and reaches no later rung
};

struct FitResult {
  FitStatus status = FitStatus::ok;
  std::string why;  // diverged: where and what ("epoch 3: the training loss is inf"); stopped: when
  std::vector<EpochMetrics> epochs;  // the completed epochs
  double train_s = 0;
  int64_t samples = 0;  // rows trained on, over every step taken (a stopped epoch's too)
  // With FitOptions::timeline: when each training step and each epoch ran, on clock_seconds(), and
  // with an input pipeline when it prepared each batch (a fit's warm-up's batches are not in it).
  Track steps, epoch_spans, input_spans;
  // EarlyStopping, or the scheduler at a rung (stopped_at_rung()): the epoch (from 1) after which
  // it stopped, and why, in words; its status stays ok.
  std::optional<int> stopped_epoch;
  std::string stop_reason;
  // EarlyStopping with restore_best_weights: the epoch (from 1) whose weights the model ends with.
  std::optional<int> restored_epoch;
  // FitOptions::rungs: its verdicts at each rung it reached; the last not kept when it stopped
  // there.
  std::vector<RungResult> rungs;
  bool stopped_at_rung() const { return !rungs.empty() && !rungs.back().kept; }
};

struct FitOptions {
  // Receives each epoch's Keras-style line ("Epoch 1/10 - 1875 steps - 2.31s - loss: ..."), without
  // a line break, with the pack member it is of (0 for one model); empty for quiet.
  std::function<void(int member, const std::string& line)> progress;
  bool timeline = false;  // time every step (Backend::mark: two events per step on a GPU)
  // when it turns true, fit stops after the current step (Ctrl-C)
  const std::atomic<bool>* stop = nullptr;
  // stop (as stopped) after this many steps in all; 0: no limit (a calibration's)
  int64_t max_steps = 0;
  // Each training step as a CUDA graph (Backend::capture), captured at its first run and replayed:
  // one launch a step instead of one per kernel, the same numbers as without. Ignored where the
  // backend has no graphs.
  bool graphs = false;
  // When set, fit stores in it the training steps it has taken so far, after each step: a relaxed
  // store, no clock read, so that another thread can tell training from a stall (processes mode's
  // heartbeat) at no cost to the step.
  std::atomic<int64_t>* steps = nullptr;
  // A scheduler's judge of the members at their rungs (successive halving); none: every member
  // trains its epochs. A member it stops ends there with its weights, as EarlyStopping's does.
  RungJudge* rungs = nullptr;
  std::vector<size_t> trials;  // with rungs: member z's trial
  // Called after each epoch a member records, once its own callbacks have run, on the fit's thread
  // between epochs (the model may be read, its weights saved): the member, the epoch (from 0), its
  // metrics, and whether the member's fit ended with it (it diverged, or its EarlyStopping or the
  // scheduler stopped it; the return is then not read). Otherwise true stops the member there, as
  // Keras's model.stop_training does: its status stays ok, stop_reason says "a callback stopped
  // training". (The Python package's keras.callbacks.Callback subclasses.)
  std::function<bool(int member, int epoch, const EpochMetrics& e, bool ended)> epoch_end;
  // Called on the fit's thread after a training step, at most once every `step_interval_s` (a clock
  // read a step where set): the steps taken in the epoch so far and its steps. On a GPU a step is
  // counted when it is queued. (The Python package's verbose 1 bar, redrawn during an epoch, as
  // Keras's Progbar is.)
  std::function<void(int64_t step, int64_t steps)> step_done;
  double step_interval_s = 0.05;
};

// Checks that the data fits the model (features, class labels, targets); a UserError otherwise,
// naming the file, line and label where the labels are the problem. `host` is the data set `data`
// was made from (its class count and label locations); `what` names it ("training data").
// fit() itself refuses a validation_split that leaves no training or no validation rows.
void check_data(const ModelSpec& spec, const DeviceData& data, const Dataset& host,
                const std::string& what);
// Rows used for training: the first (1 - validation_split) of the data, as Keras splits.
int64_t training_rows(const ModelSpec& spec, int64_t rows);
// What fitting takes from the model's pool: the model's plan and its batches'
// (nn/epoch_iterator.h).
MemoryPlan training_plan(const ModelSpec& spec, int64_t train_rows);

// Trains spec.fit.epochs epochs, running the spec's callbacks at each epoch's end (nn/callbacks.h):
// EarlyStopping ends the fit ok, with stopped_epoch, and with restore_best_weights puts the best
// epoch's weights back at the end, as Keras does; ReduceLROnPlateau lowers the rate between epochs.
// Stops as diverged at the first epoch after which a loss (training
// or validation) or a parameter is not finite, naming it in FitResult::why; stops as stopped when
// options.stop turns true or after options.max_steps steps, keeping the epochs completed before.
// A model of one member only (std::invalid_argument otherwise).
FitResult fit(Model& model, const DeviceData& data, const FitOptions& options);
// fit() for every member of a pack, one result each. A member that diverges or stops early ends its
// result there, and its kernels leave its buffers as they are from the next step on
// (StepState::stopped, kernels/pack.h): its blocks return at once, so it costs no work, and its
// weights are those it ended with. The pack is not compacted: its launches keep their shape, and a
// CUDA graph replays. Steps and epochs are the pack's, so every member's timeline is the same.
std::vector<FitResult> fit_pack(Model& model, const DeviceData& data, const FitOptions& options);

// One fit of a pack, an epoch at a time, so that one host thread can drive several packs in turn:
// launch_epoch() queues the next epoch's steps on the model's backend (on a GPU it returns while
// they run, so the thread can queue another pack's epoch on its own stream), end_epoch() waits for
// them and records each member's epoch (its metrics, validation, divergence check, progress line
// and callbacks). A member that diverges or stops early ends its result there; its kernels skip it
// from then on. fit_pack is train_epochs(fit) (below), then take_results().
// The constructor throws UserError for a validation_split that leaves no training or no validation
// rows; launch_epoch and end_epoch throw what the backend throws.
class PackFit {
 public:
  PackFit(Model& model, const DeviceData& data, FitOptions options);
  bool done() const { return done_; }  // every epoch ran, or every member diverged, or a stop came
  // After end_epoch(): some member's rung verdict waits for other models (FitOptions::rungs), and
  // launch_epoch() must wait until settle() has it.
  bool waiting() const { return !waiting_.empty(); }
  // Asks the verdicts still waiting again, waiting up to `timeout_s` for one to change when none
  // has (0: not at all). A stop (Ctrl-C) ends the waiting, and the fit, as stopped.
  void settle(double timeout_s);
  // Optional, before the first launch_epoch() (a runner calls it before its start barrier): one
  // step of each batch size, and one evaluation batch, on the model, which is then restored bit for
  // bit, so that the fit's first step is an ordinary one: its kernels loaded, with graphs its step
  // graphs captured and instantiated. The fit's numbers are the same with it or without; waits for
  // the model.
  void warm_up();
  void launch_epoch();                    // before done() only
  void end_epoch();                       // after each launch_epoch()
  std::vector<FitResult> take_results();  // once done(): one per member

 private:
  // A member's callbacks and what they keep between epochs.
  struct MemberCallbacks {
    std::optional<EarlyStopping> early_stopping;
    std::optional<ReduceLROnPlateau> reduce_lr;
    std::vector<float> best_weights;  // EarlyStopping with restore_best_weights: the best epoch's
  };

  void conclude_epoch();
  bool train_epoch(int epoch);
  int steps_in_a_run(int epoch, int64_t step) const;
  void run_step(int64_t step, bool now = false);
  void run_steps(int64_t step, int run);
  void take_timeline();
  void record_epoch(int epoch, const std::vector<std::vector<double>>& totals, double seconds);
  size_t trial(int z) const;
  bool take_verdict(int z, RungJudge::Verdict verdict);
  void run_callbacks(int z, int epoch, const EpochMetrics& e);
  void restore_best(int z);
  void stop(int z);
  void end_result(FitResult& result) const;

  Model& model_;
  const DeviceData& data_;
  const FitOptions options_;
  const ModelSpec& spec_;  // what the members share (pack_key)
  const int64_t train_, val_;
  EpochIterator batches_;
  std::vector<FitResult> results_;
  // Per member: still training, until it stops (diverged, early stopping, the scheduler's rung).
  std::vector<bool> training_;
  const bool graphs_;
  // by the batch's rows: the last may be short
  std::map<int, std::unique_ptr<Backend::StepGraph>> step_graphs_;
  int64_t samples_ = 0, steps_taken_ = 0;
  Track step_spans_, epoch_spans_, input_spans_;
  std::vector<MemberCallbacks> callbacks_;
  std::vector<float> params_;  // every member's parameters after the last epoch (record_epoch)
  std::string why_stopped_;    // "" unless a stop came
  std::vector<int> waiting_;   // the members whose rung verdict after the last epoch is not in yet
  Clock::time_point start_ = Clock::now();  // the first epoch's launch
  int epoch_ = 0;                           // the epoch launch_epoch() runs next
  Clock::time_point epoch_start_;
  Clock::time_point step_done_at_;  // FitOptions::step_done's last call
  bool completed_ = false;          // the launched epoch ran every step
  bool done_ = spec_.fit.epochs < 1;
};

// The fit loop, over a PackFit or anything with its calls (study/pack_worker.h's PackWorker, which
// adds a pack's finish): each epoch launched and ended, and the rung verdicts it waits for settled,
// asked again every 0.1 s.
template <class Fit>
void train_epochs(Fit& fit) {
  while (!fit.done()) {
    fit.launch_epoch();
    fit.end_epoch();
    while (fit.waiting()) fit.settle(0.1);
  }
}

// Mean loss and accuracy over rows [first_row, first_row + rows) of `data`: of a model of one
// member (std::invalid_argument otherwise), or of each member of a pack.
Evaluation evaluate(Model& model, const DeviceData& data, int64_t first_row, int64_t rows);
std::vector<Evaluation> evaluate_pack(Model& model, const DeviceData& data, int64_t first_row,
                                      int64_t rows);

// Keras's predict: the output layer's outputs (rows, outputs), row-major, for rows [first_row,
// first_row + rows) of data.x(), in batches of the spec's batch size, by inference's forward
// (Dropout passes its input on, BatchNormalization uses its moving statistics). Where the loss
// takes the output's logits (takes_logits), the output's sigmoid or softmax is applied here on the
// host, in float, as TensorFlow computes them (softmax less the row's largest). A model of one
// member (std::invalid_argument otherwise); data.y() is not read.
std::vector<float> predict(Model& model, const DeviceData& data, int64_t first_row, int64_t rows);

// "test_loss is nan" when e's loss is not finite, else ""; `prefix` names the set ("test").
std::string non_finite(const Evaluation& e, const std::string& prefix);

}  // namespace mf
