// A spec's loss and metrics: Keras 3's losses (keras/src/losses/losses.py) with their settings, and
// its metrics list as compile(metrics=[...]) takes it, "accuracy" resolved by Keras's rule
// (keras/src/trainers/compile_utils.py: get_metric).
#include <algorithm>
#include <string>

#include "nn/spec_parts.h"

namespace mf {
namespace {

using nlohmann::json;

constexpr KerasDefault kLossDefaults[] = {
    {"reduction", "\"sum_over_batch_size\"",
     "multifit reduces a loss to its mean over the batch, Keras's default"},
    {"axis", "-1", "multifit reduces a row's loss over its last axis"},
    {"ignore_class", "null", "multifit counts every class"},
    {"dtype", "\"float32\"", "multifit computes in float32"},
};

// Keras's names for the accuracy the model's shape decides.
constexpr const char* kAccuracyByShape[] = {"accuracy", "acc"};

// Keras's "accuracy" for these shapes: binary for one output, sparse categorical for a class index
// (one target column, several outputs), categorical otherwise.
Metric accuracy_for(const ModelSpec& spec) {
  if (spec.outputs() == 1) return Metric::binary_accuracy;
  if (spec.target_cols() == 1) return Metric::sparse_categorical_accuracy;
  return Metric::categorical_accuracy;
}

}  // namespace

std::vector<const char*> loss_keys(Loss kind) {
  switch (kind) {
    case Loss::binary_crossentropy:
    case Loss::categorical_crossentropy:
      return {"from_logits", "label_smoothing"};
    case Loss::sparse_categorical_crossentropy:
      return {"from_logits"};
    case Loss::huber:
      return {"delta"};
    default:
      return {};
  }
}

LossSpec parse_loss(const Field& field) {
  const KerasObject object(field, "name", "loss");
  LossSpec loss;
  loss.kind = object.one_of(kLossNames);
  object.allow(loss_keys(loss.kind), check_defaults(object, kLossDefaults));
  if (const auto f = object.setting("from_logits")) loss.from_logits = f->boolean();
  if (const auto f = object.setting("label_smoothing"))
    loss.label_smoothing = f->number_in(0, 1, "a number in [0, 1]");
  if (const auto f = object.setting("delta"))
    loss.delta = f->number_in(0, 1e30, "a finite number > 0", true);
  return loss;
}

json loss_to_json(const LossSpec& loss) {
  const LossSpec defaults;
  if (!loss.from_logits && loss.label_smoothing == 0 && loss.delta == defaults.delta)
    return to_string(loss.kind);
  json out = {{"name", to_string(loss.kind)}};
  if (loss.from_logits) out["from_logits"] = true;
  if (loss.label_smoothing != 0) out["label_smoothing"] = loss.label_smoothing;
  if (loss.kind == Loss::huber) out["delta"] = loss.delta;
  return out;
}

std::vector<MetricSpec> parse_metrics(const Field& field, const ModelSpec& spec) {
  if (!field.value().is_array())
    field.wrong(
        "an array of metrics, like [\"accuracy\", \"mae\"]: multifit's models have one output");
  if (field.value().size() > size_t(kMaxMetrics))
    field.wrong("at most " + std::to_string(kMaxMetrics) + " metrics");
  std::vector<MetricSpec> metrics;
  for (size_t i = 0; i < field.value().size(); ++i) {
    const Field item = field.item(i);
    const KerasObject object(item, "name", "metric");
    const std::optional<Metric> named = object.one_of(kMetricNames, kAccuracyByShape);
    MetricSpec metric{object.kind(), named.value_or(accuracy_for(spec))};
    // a class: named by its config's name, or Keras's default name
    if (item.value().is_object() && !object.is_function()) {
      constexpr KerasDefault kThreshold[] = {
          {"threshold", "0.5", "multifit's binary accuracy thresholds at 0.5"},
          {"dtype", "\"float32\"", "multifit computes in float32"}};
      constexpr KerasDefault kConfusion[] = {
          // Precision's and Recall's; their thresholds are read below
          {"top_k", "null", "multifit counts every output"},
          {"class_id", "null", "multifit counts every class"},
          {"dtype", "\"float32\"", "multifit computes in float32"}};
      constexpr KerasDefault kAuc[] = {
          {"num_thresholds", "200", "multifit's AUC has Keras's default 200 thresholds"},
          {"curve", "\"ROC\"", "multifit's AUC is the ROC curve's"},
          {"summation_method", "\"interpolation\"",
           "multifit's AUC interpolates, as Keras's default"},
          {"thresholds", "null", "multifit's AUC spaces its thresholds evenly"},
          {"multi_label", "false", "multifit's AUC reads one output"},
          {"num_labels", "null", "multifit's AUC reads one output"},
          {"label_weights", "null", "multifit's AUC reads one output"},
          {"from_logits", "false", "multifit's AUC reads the output as the loss gives it"},
          {"dtype", "\"float32\"", "multifit computes in float32"}};
      if (metric.kind == Metric::auc) {
        object.allow({}, check_defaults(object, kAuc));
      } else if (is_ratio(metric.kind)) {
        constexpr const char* kThresholds[] = {"thresholds"};
        object.allow(kThresholds, check_defaults(object, kConfusion));
        // null is Keras's 0.5; Precision(thresholds=0.5) saves 0.5
        if (const auto t = object.setting("thresholds");
            t && !t->value().is_null() && t->value() != json(0.5))
          t->wrong(
              "null or 0.5: multifit's precision and recall threshold at 0.5, Keras's default");
      } else {
        object.allow({}, check_defaults(object, kThreshold));
      }
      const auto given = object.setting("name");
      metric.name =
          given && given->value().is_string() ? given->text() : name_of(kMetricNames, metric.kind);
    }
    const bool by_index = spec.target_cols() == 1 && spec.outputs() > 1;
    // every metric but the class accuracies reads each output beside its own target
    const bool per_output = !is_accuracy(metric.kind) || metric.kind == Metric::binary_accuracy;
    if (by_index && per_output)
      item.fail(
          metric.name +
              " compares each output with its own target, but the targets are one class index for " +
              std::to_string(spec.outputs()) + " outputs",
          "use an accuracy, or give one target column per output (\"targets\")");
    if (metric.kind == Metric::auc && spec.outputs() != 1)
      item.fail(metric.name + " reads one output (a binary classifier's), but the model has " +
                    std::to_string(spec.outputs()) + " outputs",
                "use precision or recall, which count each output");
    if (metric.kind == Metric::sparse_categorical_accuracy && spec.target_cols() != 1)
      item.fail(metric.name + " needs a class index per row, but the spec has " +
                    std::to_string(spec.target_cols()) + " target columns",
                "use categorical_accuracy for one-hot targets");
    if (metric.name == "loss" || metric.name.rfind("val_", 0) == 0)
      item.fail("the name " + shown(json(metric.name)) + " is the loss's or a validation metric's",
                "name it otherwise");
    for (const MetricSpec& earlier : metrics)
      if (earlier.name == metric.name)
        item.fail(shown(json(metric.name)) + " is listed twice", "list each metric once");
    metrics.push_back(metric);
  }
  return metrics;
}

std::vector<MetricSpec> default_metrics(const ModelSpec& spec) {
  switch (spec.loss.kind) {
    case Loss::binary_crossentropy:
      return {{"accuracy", Metric::binary_accuracy}};
    case Loss::categorical_crossentropy:
      return {{"accuracy", Metric::categorical_accuracy}};
    case Loss::sparse_categorical_crossentropy:
      return {{"accuracy", Metric::sparse_categorical_accuracy}};
    default:
      return {};
  }
}

const char* to_string(Loss l) {
  for (const KerasName<Loss>& n : kLossNames)
    if (n.value == l) return n.identifier;
  return "unknown";
}

const char* metric_class_name(Metric metric) { return class_of(kMetricNames, metric); }

std::vector<std::string> loss_names() { return names_with_aliases(kLossNames); }
std::vector<std::string> metric_names() {
  std::vector<std::string> names{std::string(kAccuracyByShape[0]) + " (" + kAccuracyByShape[1] +
                                 ")"};
  for (std::string& name : names_with_aliases(kMetricNames)) names.push_back(std::move(name));
  return names;
}

json metrics_to_json(const std::vector<MetricSpec>& metrics) {
  // by class and name: "accuracy" alone would be resolved again by the shapes
  json out = json::array();
  for (const MetricSpec& m : metrics)
    out.push_back({{"class_name", metric_class_name(m.kind)}, {"config", {{"name", m.name}}}});
  return out;
}

}  // namespace mf
