#include "nn/fit.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <span>

#include "nn/callbacks.h"
#include "nn/epoch_iterator.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/formats.h"

namespace mf {
namespace {

std::string metric(const char* name, double value) {
  return std::string(" - ") + name + ": " + format_metric(value);
}

// The first of a member's parameters `params` (in layer order) that is not finite, as
// "layer 2 kernel[17] = nan", or "".
std::string non_finite_parameter(const Model& model, std::span<const float> params) {
  const auto bad =
      std::find_if(params.begin(), params.end(), [](float v) { return !std::isfinite(v); });
  if (bad == params.end()) return "";
  const int64_t index = bad - params.begin();
  constexpr const char* kRoles[] = {"kernel", "bias", "gamma", "beta"};
  for (const ParamTensor& t : model.tensors())
    if (index < t.begin + t.count)
      return "layer " + std::to_string(t.layer + 1) + " " + kRoles[int(t.role)] + "[" +
             std::to_string(index - t.begin) + "] = " + format_metric(*bad);
  return "a parameter is " + format_metric(*bad);
}

// What is not finite of a member after an epoch (its losses, then `params`, the parameters the last
// update left), or "". Accuracies count correct rows (a NaN output is a wrong one), so they are
// always finite.
std::string non_finite(const Model& model, std::span<const float> params, const EpochMetrics& e,
                       bool validated) {
  if (!std::isfinite(e.loss)) return "the training loss is " + format_metric(e.loss);
  if (validated && !std::isfinite(e.val_loss)) return "val_loss is " + format_metric(e.val_loss);
  const std::string param = non_finite_parameter(model, params);
  return param.empty() ? "" : "after the update, " + param;
}

void print_epoch(const FitOptions& options, int z, const ModelSpec& spec, int epoch, int64_t steps,
                 const EpochMetrics& e, bool pipelined) {
  if (!options.progress) return;
  char head[160];
  std::snprintf(head, sizeof head, "Epoch %d/%d - %lld steps - %s", epoch, spec.fit.epochs,
                (long long)steps, format_duration(e.seconds).c_str());
  std::string line = head + metric("loss", e.loss);
  const std::vector<MetricSpec> metrics = spec.metric_list();
  for (size_t k = 0; k < metrics.size() && k < e.metrics.size(); ++k)
    line += metric(metrics[k].name.c_str(), e.metrics[k]);
  if (!std::isnan(e.val_loss)) {
    line += metric("val_loss", e.val_loss);
    for (size_t k = 0; k < metrics.size() && k < e.val_metrics.size(); ++k)
      line += metric(("val_" + metrics[k].name).c_str(), e.val_metrics[k]);
  }
  if (!std::isnan(e.learning_rate)) {
    char rate[48];
    std::snprintf(rate, sizeof rate, " - learning_rate: %.4g", e.learning_rate);
    line += rate;
  }
  char rate[48];
  std::snprintf(rate, sizeof rate, " - %.0f samples/s", e.samples_per_s);
  line += rate;
  if (pipelined) {
    char wait[48];
    std::snprintf(wait, sizeof wait, " - input wait %.0f%%",
                  e.seconds > 0 ? 100 * e.input_wait_s / e.seconds : 0.0);
    line += wait;
  }
  options.progress(z, line);
}

}  // namespace

std::string non_finite(const Evaluation& e, const std::string& prefix) {
  // accuracies: always finite
  return std::isfinite(e.loss) ? "" : prefix + "_loss is " + format_metric(e.loss);
}

MemoryPlan training_plan(const ModelSpec& spec, int64_t train_rows) {
  MemoryPlan plan = Model::plan(spec);
  for (PlanPart& part : EpochIterator::plan(spec, train_rows).parts)
    plan.parts.push_back(std::move(part));
  return plan;
}

int64_t training_rows(const ModelSpec& spec, int64_t rows) {
  return int64_t(std::floor(double(rows) * (1.0 - spec.fit.validation_split)));
}

void check_data(const ModelSpec& spec, const DeviceData& data, const Dataset& host,
                const std::string& what) {
  auto fail = [&](const std::string& problem) {
    throw UserError("model '" + spec.name + "': " + what + " " + problem);
  };
  if (data.features() != spec.input)
    fail("has " + std::to_string(data.features()) + " features but the spec's input is " +
         std::to_string(spec.input) +
         (spec.fit.sample_weight && spec.data.rfind("csv:", 0) == 0
              ? " (fit.sample_weight takes each CSV row's last column as its weight)"
              : ""));
  const int outputs = spec.outputs(), columns = data.target_cols();
  const char* loss = to_string(spec.loss.kind);
  if (!spec.takes_label_columns(columns)) {
    const std::string has = "has " + std::to_string(columns), units = std::to_string(outputs);
    if (spec.loss.kind == Loss::sparse_categorical_crossentropy)
      fail(has + " label columns; sparse_categorical_crossentropy needs one");
    if (spec.loss.kind == Loss::categorical_crossentropy)
      fail(
          has + " label columns but the output layer has " + units +
          " units; categorical_crossentropy needs one-hot labels (one column per unit) or a class index");
    if (spec.loss.kind == Loss::binary_crossentropy)
      fail(has + " label column(s) but the output layer has " + units +
           " units; binary_crossentropy needs one 0/1 label per unit");
    fail(has + " target column(s) but the output layer has " + units + " units; " + loss +
         " needs one per unit");
  }
  const int classes = host.classes;
  const std::string at = host.label_at.empty() ? "" : " (" + host.label_at + ")";
  const bool class_indices = columns == 1 && outputs > 1 &&
                             (spec.loss.kind == Loss::sparse_categorical_crossentropy ||
                              spec.loss.kind == Loss::categorical_crossentropy);
  if (class_indices && classes < 1)
    fail("has a label that is not a class index" + at + "; " + loss + " needs labels 0 to " +
         std::to_string(outputs - 1) + " (one per unit of the output layer)");
  if (class_indices && classes > outputs)
    fail("has labels up to " + std::to_string(classes - 1) + at + " but the output layer has " +
         std::to_string(outputs) + " units; labels must be 0 to " + std::to_string(outputs - 1));
  if (spec.loss.kind == Loss::binary_crossentropy && (classes < 1 || classes > 2))
    fail("has a label that is not 0 or 1" + at + "; binary_crossentropy needs labels 0 and 1");
}

namespace {

// A member's evaluation from its totals over `rows` rows: its loss, then each metric's.
Evaluation of_totals(const ModelSpec& spec, const std::vector<double>& totals, int64_t rows) {
  Evaluation e;
  e.loss = totals[0] / double(rows);
  const std::vector<MetricSpec> metrics = spec.metric_list();
  size_t v = 1;     // the metric's first value (kernels/loss_row.h values_of)
  size_t bins = 1;  // its histogram's first bin (bins_of), after every value
  for (const MetricSpec& metric : metrics) bins += size_t(values_of(metric.kind));
  for (const MetricSpec& metric : metrics) {
    if (is_ratio(metric.kind))  // Keras's divide_no_nan
      e.metrics.push_back(totals[v + 1] > 0 ? totals[v] / totals[v + 1] : 0.0);
    else if (bins_of(metric.kind))
      e.metrics.push_back(roc_auc(&totals[bins]));
    else
      e.metrics.push_back(totals[v] / double(rows));
    v += size_t(values_of(metric.kind));
    bins += size_t(bins_of(metric.kind));
  }
  if (spec.has_accuracy()) e.accuracy = e.metrics[size_t(spec.accuracy_metric())];
  return e;
}

}  // namespace

std::vector<Evaluation> evaluate_pack(Model& model, const DeviceData& data, int64_t first_row,
                                      int64_t rows) {
  const ModelSpec& spec = model.spec();
  const int B = spec.fit.batch_size;
  model.reset_totals();
  model.backend().run_together([&] {
    for (int64_t r = first_row; r < first_row + rows; r += B) {
      const int m = int(std::min<int64_t>(B, first_row + rows - r));
      model.evaluate_batch(data.x() + r * data.features(), data.y() + r * data.y_cols(), m,
                           data.weights());
    }
  });
  std::vector<Evaluation> evaluations;
  for (const std::vector<double>& totals : model.read_totals())
    evaluations.push_back(of_totals(spec, totals, rows));
  return evaluations;
}

namespace {

// The output activation the loss took in with its logits, applied to a row `out` of n outputs.
void activate_output(Activation act, float* out, int n) {
  if (act == Activation::sigmoid) {
    for (int j = 0; j < n; ++j) out[j] = sigmoid(out[j]);
  } else if (act == Activation::softmax) {
    const float top = *std::max_element(out, out + n);
    float sum = 0;
    for (int j = 0; j < n; ++j) sum += out[j] = std::exp(out[j] - top);
    for (int j = 0; j < n; ++j) out[j] /= sum;
  }
}

}  // namespace

std::vector<float> predict(Model& model, const DeviceData& data, int64_t first_row, int64_t rows) {
  const ModelSpec& spec = model.spec();
  const int B = spec.fit.batch_size, n = spec.outputs();
  std::vector<float> outputs(size_t(rows) * size_t(n));
  for (int64_t r = 0; r < rows; r += B) {
    const int m = int(std::min<int64_t>(B, rows - r));
    const float* out = model.predict_batch(data.x() + (first_row + r) * data.features(), m);
    model.backend().to_host(outputs.data() + r * n, out, size_t(m) * size_t(n) * sizeof(float));
  }
  if (takes_logits(spec.loss.kind) && !spec.loss.from_logits)
    for (int64_t r = 0; r < rows; ++r)
      activate_output(spec.output_activation(), outputs.data() + r * n, n);
  return outputs;
}

namespace {

// The most training steps launched as one run of their graph (Backend::StepGraph::launch_times):
// enough that a pack member on the cpu reuses its buffers from its core's cache step after step,
// few enough that a stop (Ctrl-C, a step limit) is seen soon.
constexpr int kStepsInARun = 16;

void require_one_member(const Model& model, const char* what) {
  if (model.members() != 1)
    throw std::invalid_argument(std::string(what) + " of a pack of " +
                                std::to_string(model.members()) + " models: use the _pack form");
}

// The rows fit trains on: all but the validation split's, which takes the last of them (Keras's
// rule). A split that leaves no training rows, or takes none, is a UserError.
int64_t checked_training_rows(const ModelSpec& spec, int64_t rows) {
  const int64_t train = training_rows(spec, rows);
  char split[32];
  std::snprintf(split, sizeof split, "%g", spec.fit.validation_split);
  const std::string of_rows = "model '" + spec.name + "': fit.validation_split " + split + " of " +
                              std::to_string(rows) + " rows";
  if (train < 1) throw UserError(of_rows + " leaves no training rows; lower it");
  if (spec.fit.validation_split > 0 && rows - train < 1)  // Keras refuses such a split too
    throw UserError(of_rows + " takes no validation rows (floor(" + std::to_string(rows) +
                    " * (1 - " + split + ")) = " + std::to_string(train) +
                    " training rows); raise it to at least 1/" + std::to_string(rows) +
                    " or set it to 0");
  return train;
}

}  // namespace

PackFit::PackFit(Model& model, const DeviceData& data, FitOptions options)
    : model_(model),
      data_(data),
      options_(std::move(options)),
      spec_(model.spec()),
      train_(checked_training_rows(spec_, data.rows())),
      val_(data.rows() - train_),
      batches_(model, data, train_, options_.timeline),
      results_(size_t(model.members())),
      training_(size_t(model.members()), true),
      graphs_(options_.graphs && model.backend().has_graphs()),
      callbacks_(size_t(model.members())) {
  for (int z = 0; z < model.members(); ++z) {
    const ModelSpec& spec = model.spec(z);
    if (spec.fit.early_stopping)
      callbacks_[size_t(z)].early_stopping.emplace(*spec.fit.early_stopping, spec);
    if (spec.fit.reduce_lr_on_plateau)
      callbacks_[size_t(z)].reduce_lr.emplace(*spec.fit.reduce_lr_on_plateau, spec);
  }
}

void PackFit::launch_epoch() {
  epoch_start_ = step_done_at_ = Clock::now();
  if (epoch_ == 0) start_ = epoch_start_;  // the warm-up before is not the fit's time
  completed_ = train_epoch(epoch_);
}

// One training step of each batch size an epoch has (its last batch may be shorter), and with
// validation rows one evaluation batch, on the model as it is, which is then restored: every
// kernel the fit launches has run once (CUDA loads a module at its first launch), and with graphs
// each step graph is captured, instantiated and replayed once, kept for the fit. Nothing is
// counted.
void PackFit::warm_up() {
  if (done_) return model_.backend().synchronize();  // no epochs: nothing to warm
  const std::vector<std::byte> state = model_.snapshot();
  batches_.begin_epoch(0);
  const int64_t last = batches_.steps() - 1;
  run_step(0, true);
  // from row B: inside the order still
  if (batches_.rows(last) != batches_.rows(0)) run_step(last, true);
  if (val_ > 0)
    model_.evaluate_batch(data_.x() + train_ * data_.features(),
                          data_.y() + train_ * data_.y_cols(),
                          int(std::min<int64_t>(spec_.fit.batch_size, val_)), data_.weights());
  model_.restore(state);
  model_.backend().synchronize();
}

void PackFit::end_epoch() {
  const std::vector<std::vector<double>> totals = model_.read_totals();
  take_timeline();
  if (completed_) record_epoch(epoch_, totals, seconds_since(epoch_start_));
  ++epoch_;
  if (waiting_.empty()) conclude_epoch();
}

// The rung verdicts still waiting, asked again; when none has come, a wait of up to timeout_s for
// one to change and a second asking. A stop (Ctrl-C) while waiting stops the fit.
void PackFit::settle(double timeout_s) {
  const auto ask = [&] {
    const size_t before = waiting_.size();
    std::erase_if(waiting_, [&](int z) {
      return take_verdict(z, options_.rungs->verdict(trial(z), epoch_));
    });
    return waiting_.size() < before;
  };
  if (options_.stop && options_.stop->load(std::memory_order_relaxed)) {
    why_stopped_ =
        "stopped after epoch " + std::to_string(epoch_) + ", waiting for its rung's verdict";
    completed_ = false;
    waiting_.clear();
  } else if (!ask() && timeout_s > 0) {
    options_.rungs->wait(timeout_s);
    ask();
  }
  if (waiting_.empty()) conclude_epoch();
}

// Whether the fit goes on after the epoch just recorded (its verdicts all in), and at its end
// each member's result closed.
void PackFit::conclude_epoch() {
  done_ = !completed_ || epoch_ >= spec_.fit.epochs ||
          std::find(training_.begin(), training_.end(), true) == training_.end();
  if (done_)
    for (size_t z = 0; z < results_.size(); ++z) {
      if (training_[z]) {
        if (!why_stopped_.empty())
          results_[z].status = FitStatus::stopped, results_[z].why = why_stopped_;
        // Keras's EarlyStopping restores at the end of training, stopped early or not
        restore_best(int(z));
        end_result(results_[z]);
        if (options_.rungs) options_.rungs->ended(trial(int(z)));
      }
      model_.resume(int(z));  // the fit is over: an evaluation after it sees every member
    }
}

// The epoch's training steps; false when a stop (Ctrl-C, the calibration's step limit) came
// first.
bool PackFit::train_epoch(int epoch) {
  Backend& backend = model_.backend();
  const int64_t steps = batches_.steps();
  batches_.begin_epoch(epoch);
  model_.reset_totals();
  for (int64_t step = 0; step < steps;) {
    const bool limit = options_.max_steps > 0 && epoch * steps + step >= options_.max_steps;
    if (limit || (options_.stop && options_.stop->load(std::memory_order_relaxed))) {
      why_stopped_ = "stopped in epoch " + std::to_string(epoch + 1) + " at step " +
                     std::to_string(step + 1) + " of " + std::to_string(steps);
      return false;
    }
    const int run = steps_in_a_run(epoch, step);
    if (options_.timeline) backend.mark();
    batches_.prepare(step);
    run_steps(step, run);
    for (int i = 0; i < run; ++i) samples_ += batches_.rows(step + i);
    step += run;
    steps_taken_ += run;
    if (options_.steps) options_.steps->store(steps_taken_, std::memory_order_relaxed);
    if (options_.timeline) backend.mark();
    if (options_.step_done && step < steps) {
      const Clock::time_point now = Clock::now();
      if (std::chrono::duration<double>(now - step_done_at_).count() >= options_.step_interval_s) {
        step_done_at_ = now;
        options_.step_done(step, steps);
      }
    }
  }
  return true;
}

// How many steps from `step` on run as one launch of their graph (and one span of the timeline):
// for a pack on a backend that runs its members apart, those of its batch size, up to
// kStepsInARun and the step limit; else 1, as without graphs or with an input pipeline (each
// batch is uploaded before its step).
int PackFit::steps_in_a_run(int epoch, int64_t step) const {
  if (!graphs_ || batches_.pipelined() || model_.members() == 1 ||
      !model_.backend().runs_members_apart())
    return 1;
  int64_t last = std::min(batches_.steps(), step + kStepsInARun);
  if (options_.max_steps > 0)
    last = std::min(last, options_.max_steps - int64_t(epoch) * batches_.steps());
  int run = 1;
  while (step + run < last && batches_.rows(step + run) == batches_.rows(step)) ++run;
  return run;
}

// Queues the epoch's training step `step`: its launches, or the graph of its batch size. With an
// input pipeline its batch is copied in first (prepared on this thread when `now`: the warm-up).
void PackFit::run_step(int64_t step, bool now) {
  batches_.prepare(step, now);
  run_steps(step, 1);
}

// Queues `run` training steps from `step` on, of one batch size (steps_in_a_run): with graphs as
// `run` launches of its graph in a row.
void PackFit::run_steps(int64_t step, int run) {
  const auto train_step = [&] {
    const EpochIterator::Batch batch = batches_.batch(step);
    model_.train_batch(batch.x, batch.y, batch.size, batch.rows, batch.stride, data_.weights());
  };
  if (!graphs_) return train_step();
  // A step's calls are the same every step (nn/model.h), so one graph per batch size serves all.
  std::unique_ptr<Backend::StepGraph>& graph = step_graphs_[batches_.rows(step)];
  if (!graph) graph = model_.backend().capture(train_step);
  graph->launch_times(run);
}

// The epoch's step marks, (begin, end) per step, into the timeline.
void PackFit::take_timeline() {
  if (!options_.timeline) return;
  const std::vector<double> marks = model_.backend().take_marks();
  for (size_t i = 0; i + 1 < marks.size(); i += 2) step_spans_.push_back({marks[i], marks[i + 1]});
  if (!marks.empty()) epoch_spans_.push_back({marks.front(), marks.back()});
  const Track input = batches_.take_input_spans();
  input_spans_.insert(input_spans_.end(), input.begin(), input.end());
}

// Each member still training: its metrics of the epoch, its progress line, whether it diverged,
// and its callbacks.
void PackFit::record_epoch(int epoch, const std::vector<std::vector<double>>& totals,
                           double seconds) {
  const InputPipeline::Times input = batches_.take_input_times();
  std::vector<Evaluation> validation(results_.size());
  if (val_ > 0) validation = evaluate_pack(model_, data_, train_, val_);
  model_.get_all_params(params_);  // every member's, in one copy
  const int64_t count = model_.param_count();
  for (size_t z = 0; z < results_.size(); ++z) {
    if (!training_[z]) continue;
    FitResult& result = results_[z];
    const Evaluation trained = of_totals(spec_, totals[z], train_);
    EpochMetrics e;
    e.loss = trained.loss, e.accuracy = trained.accuracy, e.metrics = trained.metrics;
    e.val_loss = validation[z].loss;
    e.val_accuracy = validation[z].accuracy;
    e.val_metrics = validation[z].metrics;
    if (callbacks_[z].reduce_lr) e.learning_rate = model_.learning_rate(int(z));
    e.seconds = seconds;
    e.samples_per_s = double(train_) / seconds;
    e.input_wait_s = input.wait_s, e.input_busy_s = input.busy_s;
    result.epochs.push_back(e);
    result.samples = samples_;
    print_epoch(options_, int(z), model_.spec(int(z)), epoch + 1, batches_.steps(), e,
                batches_.pipelined());
    const std::span<const float> own = std::span(params_).subspan(z * size_t(count), size_t(count));
    const std::string bad = non_finite(model_, own, e, val_ > 0);
    if (!bad.empty()) {
      result.status = FitStatus::diverged;
      result.why = "epoch " + std::to_string(epoch + 1) + ": " + bad;
      stop(int(z));
      if (options_.epoch_end) options_.epoch_end(int(z), epoch, e, true);
      continue;
    }
    run_callbacks(int(z), epoch, e);
    if (!training_[z] && options_.epoch_end) options_.epoch_end(int(z), epoch, e, true);
    if (training_[z] && options_.epoch_end && options_.epoch_end(int(z), epoch, e, false)) {
      result.stopped_epoch = epoch + 1;
      result.stop_reason = "a callback stopped training";
      restore_best(int(z));  // as at any end of training (conclude_epoch)
      stop(int(z));
      continue;
    }
    // A rung at the member's own last epoch judges nothing: it has trained what it asked for.
    if (training_[z] && epoch + 1 < spec_.fit.epochs && options_.rungs &&
        options_.rungs->judges(trial(int(z)), epoch + 1)) {
      const std::optional<double> value =
          monitored(model_.spec(int(z)), options_.rungs->metric(), e);
      result.rungs.push_back({epoch + 1, value.value_or(NAN), true});
      if (!take_verdict(int(z), options_.rungs->judge(trial(int(z)), epoch + 1, value)))
        waiting_.push_back(int(z));
    }
  }
}

size_t PackFit::trial(int z) const { return options_.trials.at(size_t(z)); }

// Member z's verdict at the rung it has just reached: kept, or stopped there. False while
// undecided.
bool PackFit::take_verdict(int z, RungJudge::Verdict verdict) {
  if (verdict == RungJudge::Verdict::undecided) return false;
  if (verdict == RungJudge::Verdict::stop) {
    FitResult& result = results_[size_t(z)];
    RungResult& rung = result.rungs.back();
    rung.kept = false;
    result.stopped_epoch = rung.epochs;
    result.stop_reason = options_.rungs->name() + ": " + options_.rungs->metric() + " " +
                         format_metric(rung.value) + " lost at its rung after epoch " +
                         std::to_string(rung.epochs);
    if (options_.progress)
      options_.progress(
          z, "Epoch " + std::to_string(rung.epochs) + ": stopped by " + result.stop_reason);
    stop(z);
  }
  return true;
}

// Member z's EarlyStopping and ReduceLROnPlateau after epoch `epoch` (from 0).
void PackFit::run_callbacks(int z, int epoch, const EpochMetrics& e) {
  MemberCallbacks& c = callbacks_[size_t(z)];
  const ModelSpec& spec = model_.spec(z);
  if (c.reduce_lr)
    if (const auto rate = c.reduce_lr->on_epoch_end(monitored(spec, c.reduce_lr->spec().monitor, e),
                                                    model_.learning_rate(z)))
      model_.set_learning_rate(*rate, z);
  if (!c.early_stopping) return;
  EarlyStopping& early = *c.early_stopping;
  const EarlyStopping::Decision d =
      early.on_epoch_end(epoch, monitored(spec, early.spec().monitor, e));
  if (d.best && early.spec().restore_best_weights) c.best_weights = model_.get_weights(z);
  if (!d.stop) return;
  FitResult& result = results_[size_t(z)];
  result.stopped_epoch = epoch + 1;
  char best[64];
  std::snprintf(best, sizeof best, "%.6g", early.best().value_or(NAN));
  result.stop_reason = "EarlyStopping: " + early.spec().monitor + " did not improve for " +
                       std::to_string(early.wait()) + (early.wait() == 1 ? " epoch" : " epochs") +
                       " (best " + best + " after epoch " + std::to_string(early.best_epoch() + 1) +
                       ")";
  if (options_.progress)
    options_.progress(z, "Epoch " + std::to_string(epoch + 1) + ": early stopping");
  restore_best(z);
  stop(z);
}

// EarlyStopping's restore_best_weights, where it kept some: the model ends with them.
void PackFit::restore_best(int z) {
  MemberCallbacks& c = callbacks_[size_t(z)];
  if (c.best_weights.empty()) return;
  model_.set_weights(c.best_weights, z);
  const int epoch = c.early_stopping->best_epoch() + 1;
  results_[size_t(z)].restored_epoch = epoch;
  if (options_.progress)  // Keras's line
    options_.progress(z, "Restoring model weights from the end of the best epoch: " +
                             std::to_string(epoch) + ".");
  c.best_weights.clear();
}

// Member z's result ends, and its kernels skip it from the next step on.
void PackFit::stop(int z) {
  end_result(results_[size_t(z)]);
  training_[size_t(z)] = false;
  model_.stop(z);
  if (options_.rungs) options_.rungs->ended(trial(z));
}

// A member's result ends: its time and the timeline so far.
void PackFit::end_result(FitResult& result) const {
  result.samples = samples_;
  result.train_s = seconds_since(start_);
  result.steps = step_spans_, result.epoch_spans = epoch_spans_, result.input_spans = input_spans_;
}

std::vector<FitResult> PackFit::take_results() { return std::move(results_); }

Evaluation evaluate(Model& model, const DeviceData& data, int64_t first_row, int64_t rows) {
  require_one_member(model, "evaluate");
  return evaluate_pack(model, data, first_row, rows).front();
}

FitResult fit(Model& model, const DeviceData& data, const FitOptions& options) {
  require_one_member(model, "fit");
  return fit_pack(model, data, options).front();
}

std::vector<FitResult> fit_pack(Model& model, const DeviceData& data, const FitOptions& options) {
  PackFit fit(model, data, options);
  train_epochs(fit);
  return fit.take_results();
}

}  // namespace mf
