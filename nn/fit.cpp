#include "nn/fit.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "nn/epoch_iterator.h"
#include "runtime/clock.h"
#include "runtime/error.h"

namespace mf {
namespace {

std::string metric(const char* name, double value) { return std::string(" - ") + name + ": " + format_metric(value); }

// The first parameter that is not finite, as "layer 2 kernel[17] = nan", or "".
std::string non_finite_parameter(Model& model) {
  const std::vector<float> params = model.get_params();
  const auto bad = std::find_if(params.begin(), params.end(), [](float v) { return !std::isfinite(v); });
  if (bad == params.end()) return "";
  int64_t index = bad - params.begin();
  const std::vector<LayerSpec>& layers = model.spec().layers;
  int in = model.spec().input;
  for (size_t l = 0; l < layers.size(); ++l) {
    const int64_t kernel = int64_t(in) * layers[l].units, bias = layers[l].units;
    const char* part = index < kernel ? "kernel" : "bias";
    if (index < kernel + bias) {
      const int64_t at = index < kernel ? index : index - kernel;
      return "layer " + std::to_string(l + 1) + " " + part + "[" + std::to_string(at) + "] = " + format_metric(*bad);
    }
    index -= kernel + bias;
    in = layers[l].units;
  }
  return "a parameter is " + format_metric(*bad);
}

// What is not finite after an epoch (its losses, then the parameters the last update left), or "".
// Accuracies count correct rows (a NaN output is a wrong one), so they are always finite.
std::string non_finite(Model& model, const EpochMetrics& e, bool validated) {
  if (!std::isfinite(e.loss)) return "the training loss is " + format_metric(e.loss);
  if (validated && !std::isfinite(e.val_loss)) return "val_loss is " + format_metric(e.val_loss);
  const std::string param = non_finite_parameter(model);
  return param.empty() ? "" : "after the update, " + param;
}

void print_epoch(const FitOptions& options, const ModelSpec& spec, int epoch, int64_t steps,
                 const EpochMetrics& e) {
  if (!options.progress) return;
  char head[160];
  std::snprintf(head, sizeof head, "Epoch %d/%d - %lld steps - %s", epoch,
                spec.fit.epochs, (long long)steps, format_duration(e.seconds).c_str());
  std::string line = head + metric("loss", e.loss);
  if (has_accuracy(spec)) line += metric("accuracy", e.accuracy);
  if (!std::isnan(e.val_loss)) {
    line += metric("val_loss", e.val_loss);
    if (has_accuracy(spec)) line += metric("val_accuracy", e.val_accuracy);
  }
  char rate[48];
  std::snprintf(rate, sizeof rate, " - %.0f samples/s", e.samples_per_s);
  options.progress(line + rate);
}

}  // namespace

bool has_accuracy(const ModelSpec& spec) { return spec.loss != Loss::mse; }

std::string format_duration(double seconds) {
  char text[32];
  if (seconds < 1.0) std::snprintf(text, sizeof text, "%.0fms", seconds * 1e3);
  else std::snprintf(text, sizeof text, "%.2fs", seconds);
  return text;
}

std::string format_metric(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

std::string non_finite(const Evaluation& e, const std::string& prefix) {
  return std::isfinite(e.loss) ? "" : prefix + "_loss is " + format_metric(e.loss);  // accuracies: always finite
}

MemoryPlan training_plan(const ModelSpec& spec, int64_t train_rows) {
  MemoryPlan plan = Model::plan(spec);
  for (PlanPart& part : EpochIterator::plan(spec, train_rows).parts) plan.parts.push_back(std::move(part));
  return plan;
}

int64_t training_rows(const ModelSpec& spec, int64_t rows) {
  return int64_t(std::floor(double(rows) * (1.0 - spec.fit.validation_split)));
}

void check_data(const ModelSpec& spec, const DeviceData& data, const Dataset& host, const std::string& what) {
  auto fail = [&](const std::string& problem) {
    throw UserError("model '" + spec.name + "': " + what + " " + problem);
  };
  const int classes = host.classes;
  const std::string at = host.label_at.empty() ? "" : " (" + host.label_at + ")";
  if (data.features() != spec.input)
    fail("has " + std::to_string(data.features()) + " features but the spec's input is " +
         std::to_string(spec.input));
  const int outputs = spec.outputs();
  switch (spec.loss) {
    case Loss::sparse_categorical_crossentropy:
      if (data.target_cols() != 1)
        fail("has " + std::to_string(data.target_cols()) + " label columns; sparse_categorical_crossentropy needs one");
      if (classes < 1)
        fail("has a label that is not a class index" + at + "; sparse_categorical_crossentropy needs labels 0 to " +
             std::to_string(outputs - 1) + " (one per unit of the output layer)");
      if (classes > outputs)
        fail("has labels up to " + std::to_string(classes - 1) + at + " but the output layer has " +
             std::to_string(outputs) + " units; labels must be 0 to " + std::to_string(outputs - 1));
      break;
    case Loss::binary_crossentropy:
      if (data.target_cols() != outputs)
        fail("has " + std::to_string(data.target_cols()) + " label column(s) but the output layer has " +
             std::to_string(outputs) + " units; binary_crossentropy needs one 0/1 label per unit");
      if (classes < 1 || classes > 2)
        fail("has a label that is not 0 or 1" + at + "; binary_crossentropy needs labels 0 and 1");
      break;
    case Loss::mse:
      if (data.target_cols() != outputs)
        fail("has " + std::to_string(data.target_cols()) + " target column(s) but the output layer has " +
             std::to_string(outputs) + " units; mse needs one per unit");
      break;
  }
}

Evaluation evaluate(Model& model, const DeviceData& data, int64_t first_row, int64_t rows) {
  const ModelSpec& spec = model.spec();
  const int B = spec.fit.batch_size;
  model.reset_totals();
  for (int64_t r = first_row; r < first_row + rows; r += B) {
    const int m = int(std::min<int64_t>(B, first_row + rows - r));
    model.evaluate_batch(data.x() + r * data.features(), data.y() + r * data.target_cols(), m);
  }
  const auto [loss, correct] = model.read_totals();
  return {loss / double(rows), has_accuracy(spec) ? correct / double(rows) : NAN};
}

FitResult fit(Model& model, const DeviceData& data, const FitOptions& options) {
  const ModelSpec& spec = model.spec();
  const int64_t train = training_rows(spec, data.rows()), val = data.rows() - train;
  char split[32];
  std::snprintf(split, sizeof split, "%g", spec.fit.validation_split);
  const std::string of_rows = "model '" + spec.name + "': fit.validation_split " + split + " of " +
                              std::to_string(data.rows()) + " rows";
  if (train < 1) throw UserError(of_rows + " leaves no training rows; lower it");
  if (spec.fit.validation_split > 0 && val < 1)  // Keras refuses such a split too
    throw UserError(of_rows + " takes no validation rows (floor(" + std::to_string(data.rows()) + " * (1 - " + split +
                    ")) = " + std::to_string(train) + " training rows); raise it to at least 1/" +
                    std::to_string(data.rows()) + " or set it to 0");
  EpochIterator batches(model, data, train);
  const int64_t steps = batches.steps();
  Backend& backend = model.backend();
  FitResult result;
  const Clock::time_point start = Clock::now();
  for (int epoch = 0; epoch < spec.fit.epochs; ++epoch) {
    const Clock::time_point epoch_start = Clock::now();
    batches.begin_epoch(epoch);
    model.reset_totals();
    for (int64_t step = 0; step < steps; ++step) {
      const bool limit = options.max_steps > 0 && epoch * steps + step >= options.max_steps;
      if (limit || (options.stop && options.stop->load(std::memory_order_relaxed))) {
        result.status = FitStatus::stopped;
        result.why = "stopped in epoch " + std::to_string(epoch + 1) + " at step " + std::to_string(step + 1) + " of " +
                     std::to_string(steps);
        break;
      }
      if (options.timeline) backend.mark();
      const EpochIterator::Batch batch = batches.batch(step);
      model.train_batch(batch.x, batch.y, batch.rows, batch.indices);
      result.samples += batch.rows;
      if (options.timeline) backend.mark();
    }
    const auto [loss_sum, correct_sum] = model.read_totals();
    if (options.timeline) {
      const std::vector<double> marks = backend.take_marks();  // (begin, end) per step
      for (size_t i = 0; i + 1 < marks.size(); i += 2) result.steps.push_back({marks[i], marks[i + 1]});
      if (!marks.empty()) result.epoch_spans.push_back({marks.front(), marks.back()});
    }
    if (result.status == FitStatus::stopped) break;
    EpochMetrics e;
    e.loss = loss_sum / double(train);
    e.accuracy = has_accuracy(spec) ? correct_sum / double(train) : NAN;
    if (val > 0) {
      const Evaluation v = evaluate(model, data, train, val);
      e.val_loss = v.loss;
      e.val_accuracy = v.accuracy;
    }
    e.seconds = seconds_since(epoch_start);
    e.samples_per_s = double(train) / e.seconds;
    result.epochs.push_back(e);
    print_epoch(options, spec, epoch + 1, steps, e);
    const std::string bad = non_finite(model, e, val > 0);
    if (!bad.empty()) {
      result.status = FitStatus::diverged;
      result.why = "epoch " + std::to_string(epoch + 1) + ": " + bad;
      break;
    }
  }
  result.train_s = seconds_since(start);
  return result;
}

}  // namespace mf
