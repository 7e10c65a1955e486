#pragma once
// The loss of one row of outputs, its metrics and its gradient, in one pass, as Keras 3 computes
// them on TensorFlow (keras/src/losses/losses.py, keras/src/metrics/*_metrics.py). The CPU backend
// loops it over rows; the CUDA kernel runs it one thread per row (output widths are small: classes
// or regression targets).
#include "kernels/element_math.h"
#include "runtime/names.h"

namespace mf {

// The metrics a model reports beside its loss (Keras's compile(metrics=[...])); "accuracy" is one
// of the first three, chosen from the shapes as Keras chooses it (nn/spec.h). Order is part of the
// report's form; append only.
enum class Metric : int {
  binary_accuracy = 0,
  categorical_accuracy = 1,
  sparse_categorical_accuracy = 2,
  mean_absolute_error = 3,
  mean_squared_error = 4,
  precision = 5,
  recall = 6,
  auc = 7
};
// Each metric's Keras identifiers and class, the first identifier the name Keras gives an instance
// of the class (the report's name of the kind). A spec also takes "accuracy" and "acc", which
// nn/spec_loss.cpp resolves to one of the accuracies by the model's shape, as Keras's compile does.
inline constexpr KerasName<Metric> kMetricNames[] = {
    {"binary_accuracy", "BinaryAccuracy", Metric::binary_accuracy},
    {"categorical_accuracy", "CategoricalAccuracy", Metric::categorical_accuracy},
    {"sparse_categorical_accuracy", "SparseCategoricalAccuracy",
     Metric::sparse_categorical_accuracy},
    {"mean_absolute_error", "MeanAbsoluteError", Metric::mean_absolute_error},
    {"mean_squared_error", "MeanSquaredError", Metric::mean_squared_error},
    {"mae", "MeanAbsoluteError", Metric::mean_absolute_error},
    {"mse", "MeanSquaredError", Metric::mean_squared_error},
    {"precision", "Precision", Metric::precision},
    {"recall", "Recall", Metric::recall},
    {"auc", "AUC", Metric::auc}};
inline constexpr int kMaxMetrics = 4;
MF_HD bool is_accuracy(Metric m) { return int(m) <= int(Metric::sparse_categorical_accuracy); }
// Precision and recall are ratios of counts over all of an epoch's rows, as Keras's confusion
// metrics keep them (keras/src/metrics/confusion_metrics.py): a row adds two counts, the true
// positives and then the predicted (precision) or actual (recall) positives, and the metric is
// their ratio, 0 where nothing was counted (divide_no_nan). Every other metric is a row's mean
// over its outputs, and the metric its mean over the rows.
MF_HD bool is_ratio(Metric m) { return m == Metric::precision || m == Metric::recall; }
MF_HD int values_of(Metric m) { return is_ratio(m) ? 2 : 1; }
// AUC, as Keras's keras.metrics.AUC() computes it (its defaults: 200 thresholds evenly spaced, the
// ROC curve, interpolated): over an epoch's rows, how many positives and negatives fall in each of
// 200 buckets of the prediction (keras/src/metrics/metrics_utils.py,
// _update_confusion_matrix_variables_optimized). A row's value is its bucket's code (auc_code),
// and the totals keep the epoch's histogram: bins_of doubles after the rows' sums (the positives'
// 200 buckets, then the negatives'), which count_codes (kernels/kernels.h) adds the batch's codes
// to. Of one output only, so that a row has one code.
inline constexpr int kAucThresholds = 200;
MF_HD int bins_of(Metric m) { return m == Metric::auc ? 2 * kAucThresholds : 0; }
// The bucket of a prediction p: ceil(clip(p, 0, 1) * 199) - 1 in float32, at least 0 (Keras's
// thresholds include -epsilon and 1 + epsilon); the code is the bucket for a positive target (not
// 0: Keras casts y_true to bool) and 200 + the bucket for a negative one.
MF_HD float auc_code(float t, float p) {
  const float clipped = fminf(fmaxf(p, 0.f), 1.f);
  const int bucket = int(ceilf(clipped * float(kAucThresholds - 1))) - 1;
  const int at_least_0 = bucket < 0 ? 0 : bucket;
  return float(t != 0.f ? at_least_0 : kAucThresholds + at_least_0);
}
// Keras's AUC of an epoch's histogram bins(2 * 200) (AUC.result(): ROC, interpolation): at each
// threshold i the true positives tp[i] are the positives in buckets >= i (the false positives fp[i]
// the negatives'), recall = tp / positives and the false-positive rate = fp / negatives (0 where
// there are none: divide_no_nan), and the area is Σ (fpr[i] - fpr[i + 1]) (recall[i] +
// recall[i + 1]) / 2 over i < 199. In double: Keras's float32 counts are whole numbers, exact in
// both.
inline double roc_auc(const double* bins) {
  double tp[kAucThresholds + 1] = {}, fp[kAucThresholds + 1] = {};
  for (int i = kAucThresholds - 1; i >= 0; --i)
    tp[i] = tp[i + 1] + bins[i], fp[i] = fp[i + 1] + bins[kAucThresholds + i];
  const auto ratio = [](double a, double b) { return b != 0 ? a / b : 0.0; };
  double area = 0;
  for (int i = 0; i + 1 < kAucThresholds; ++i)
    area += (ratio(fp[i], fp[0]) - ratio(fp[i + 1], fp[0])) *
            ((ratio(tp[i], tp[0]) + ratio(tp[i + 1], tp[0])) / 2);
  return area;
}

struct MetricList {
  int count = 0;
  Metric kind[kMaxMetrics] = {};
  MF_HD int values() const {
    int sum = 0;
    for (int k = 0; k < count; ++k) sum += values_of(kind[k]);
    return sum;
  }
  MF_HD int bins() const {
    int sum = 0;
    for (int k = 0; k < count; ++k) sum += bins_of(kind[k]);
    return sum;
  }
};
inline constexpr int kMaxMetricValues = 2 * kMaxMetrics;

// What a pack's members share in their loss pass: the loss, whether the output is logits the user
// asked the loss to take (from_logits: the metrics then see the logits, as Keras's do), the target
// columns (1 for class indices) and the metrics. A row's values are its loss, then each metric's
// (values_of: one, or a ratio's two counts).
// Where the data carries a weight per row (data/dataset.h RowWeights), it is the column after the
// targets, and the pass multiplies the row's loss and gradient by it where `weighted`, as Keras
// multiplies each sample's loss by its sample weight and divides the sum by the batch's rows
// (keras/src/losses/loss.py, reduce_weighted_values); the metrics stay unweighted, as those of
// Keras's compile(metrics=...) do.
struct LossShape {
  Loss loss = Loss::mse;
  bool from_logits = false;
  int target_cols = 1;
  MetricList metrics;
  bool weight_column = false;  // each row of targets is followed by its weight
  bool weighted = false;       // the pass applies it (only with weight_column)
  MF_HD int values() const { return 1 + metrics.values(); }
  // A member's totals: the sums of the rows' values, then the metrics' histograms (bins_of).
  MF_HD int totals() const { return values() + metrics.bins(); }
  MF_HD int target_stride() const { return target_cols + (weight_column ? 1 : 0); }
  // The row's weight: its column where the pass applies it, else 1.
  MF_HD float weight(const float* target) const { return weighted ? target[target_cols] : 1.f; }
};

// A member's own loss settings (MemberSettings, kernels/member_settings.h), as Keras rounds them:
// label_smoothing s mixes targets as t (1 - s) + s / classes (categorical) or t (1 - s) + 0.5 s
// (binary), 1 - s and 0.5 s in double, then float32; huber's delta.
struct LossSettings {
  float label_smoothing = 0, one_minus_label_smoothing = 1, half_label_smoothing = 0;
  float delta = 1;
};

// The metrics that read each output beside its own target (binary accuracy, mae, mse, precision,
// recall, AUC): p is what Keras's metric sees of output j, t its target; sum[v] gathers the
// metrics' values (values_of each) over the row's outputs (AUC's of its one output).
MF_HD void add_element_metrics(const MetricList& metrics, float t, float p, float* sum) {
  for (int k = 0, v = 0; k < metrics.count; v += values_of(metrics.kind[k]), ++k) {
    // Keras's confusion metrics: y_true cast to bool, y_pred > the threshold 0.5
    const bool positive = t != 0.f, predicted = p > 0.5f;
    switch (metrics.kind[k]) {
      case Metric::binary_accuracy:
        sum[v] += t == (predicted ? 1.f : 0.f) ? 1.f : 0.f;
        break;  // y_true == (y_pred > 0.5)
      case Metric::mean_absolute_error:
        sum[v] += fabsf(t - p);
        break;
      case Metric::mean_squared_error:
        sum[v] += (t - p) * (t - p);
        break;
      case Metric::precision:
        sum[v] += positive && predicted ? 1.f : 0.f;
        sum[v + 1] += predicted ? 1.f : 0.f;
        break;
      case Metric::recall:
        sum[v] += positive && predicted ? 1.f : 0.f;
        sum[v + 1] += positive ? 1.f : 0.f;
        break;
      case Metric::auc:
        sum[v] = auc_code(t, p);
        break;
      default:
        break;
    }
  }
}

// out(n): logits for the cross-entropies, the output layer's activations for the others. target:
// a class index (target_cols 1 with several outputs) or n values, then the row's weight where the
// shape has its column. scale = loss_grad_scale(). Writes d_out(n) and values(shape.values()): the
// loss times the row's weight, the metrics unweighted.
MF_HD void loss_row(const LossShape& shape, const LossSettings& s, const float* out,
                    const float* target, float* d_out, int n, float scale, float* values) {
  const Loss loss = shape.loss;
  const float weight = shape.weight(target);
  scale *= weight;  // d(sum of w * loss / rows) / d(loss of this row): w / rows
  // a class index rather than one value per output
  const bool by_index = shape.target_cols == 1 && n > 1;
  const int label = by_index ? int(target[0]) : -1;
  const auto target_at = [&](int j) { return by_index ? (j == label ? 1.f : 0.f) : target[j]; };
  // Softmax and sigmoid of the logits, where the loss takes them: what Keras's metrics see unless
  // from_logits (then the logits themselves).
  const bool probabilities = takes_logits(loss) && !shape.from_logits;
  float max = out[0], sum = 0.f;
  if (sums_over_classes(loss)) {
    for (int j = 1; j < n; ++j) max = fmaxf(max, out[j]);
    for (int j = 0; j < n; ++j) sum += expf(out[j] - max);
  }
  const auto predicted = [&](int j) {
    if (!probabilities) return out[j];
    return sums_over_classes(loss) ? expf(out[j] - max) / sum : sigmoid(out[j]);
  };

  float total = 0.f, metric_sums[kMaxMetricValues] = {};
  if (loss == Loss::sparse_categorical_crossentropy) {
    for (int j = 0; j < n; ++j)
      d_out[j] = (expf(out[j] - max) / sum - (j == label ? 1.f : 0.f)) * scale;
    total = logf(sum) + max - out[label];  // -log softmax(out)[label]
  } else if (loss == Loss::categorical_crossentropy) {
    const float log_sum = logf(sum) + max, smoothing = s.label_smoothing / float(n);
    for (int j = 0; j < n; ++j) {
      const float t = s.label_smoothing != 0.f
                          ? target_at(j) * s.one_minus_label_smoothing + smoothing
                          : target_at(j);
      total += t * (log_sum - out[j]);  // -t log softmax(out)[j]
      d_out[j] = (expf(out[j] - max) / sum - t) * scale;
    }
  } else {
    for (int j = 0; j < n; ++j) {
      const float z = out[j], t = target[j];
      float term = 0.f, grad = 0.f, p = z;  // p: what the metrics see
      switch (loss) {
        case Loss::binary_crossentropy: {
          const float smoothed = t * s.one_minus_label_smoothing + s.half_label_smoothing;
          const BceOfLogit bce = bce_from_logit(z, s.label_smoothing != 0.f ? smoothed : t);
          term = bce.loss;
          grad = bce.probability - (s.label_smoothing != 0.f ? smoothed : t);
          p = probabilities ? bce.probability : z;  // sigmoid(z), as predicted() computes it
          break;
        }
        default: {  // kernels/losses.h
          const ElementLoss element = element_loss(loss, z, t, s.delta);
          term = element.term, grad = element.grad;
        }
      }
      total += term;
      d_out[j] = grad * scale;
      add_element_metrics(shape.metrics, t, p, metric_sums);  // in the same pass: p is at hand
    }
    total /= float(n);
  }
  values[0] = total * weight;

  // Each metric of the row, from what Keras's metrics see (predicted) and the targets as given. The
  // element-wise ones of an element-wise loss are summed above; those of a loss over the classes
  // (never with a class index: the parser refuses them) and the argmax of the accuracies here.
  bool argmax_needed = false;
  for (int k = 0; k < shape.metrics.count; ++k)
    argmax_needed = argmax_needed || shape.metrics.kind[k] == Metric::categorical_accuracy ||
                    shape.metrics.kind[k] == Metric::sparse_categorical_accuracy;
  if (sums_over_classes(loss))
    for (int j = 0; j < n && !by_index; ++j)
      add_element_metrics(shape.metrics, target[j], predicted(j), metric_sums);
  int argmax_predicted = 0, argmax_target = label;
  if (argmax_needed) {
    float best = predicted(0);
    for (int j = 1; j < n; ++j)
      if (const float p = predicted(j); p > best) best = p, argmax_predicted = j;
    if (!by_index) {
      argmax_target = 0;
      for (int j = 1; j < n; ++j)
        if (target[j] > target[argmax_target]) argmax_target = j;
    }
  }
  for (int k = 0, v = 0; k < shape.metrics.count; v += values_of(shape.metrics.kind[k]), ++k) {
    switch (shape.metrics.kind[k]) {
      case Metric::categorical_accuracy:
        values[1 + v] = argmax_predicted == argmax_target ? 1.f : 0.f;
        break;
      case Metric::sparse_categorical_accuracy:
        values[1 + v] = float(argmax_predicted) == target[0] ? 1.f : 0.f;
        break;
      case Metric::precision:
      case Metric::recall:  // the row's counts, as they are
        values[1 + v] = metric_sums[v], values[2 + v] = metric_sums[v + 1];
        break;
      case Metric::auc:  // its code
        values[1 + v] = metric_sums[v];
        break;
      default:
        values[1 + v] = metric_sums[v] / float(n);  // averaged over the outputs
    }
  }
}

// Sparse categorical cross-entropy of a row of probabilities p(n) that a library softmax computed
// (the cuDNN reference path): the same loss, gradient and accuracy as loss_row() from logits, up
// to rounding. target: the class index, then the row's weight where the shape has its column. d_out
// may alias p; values as loss_row's, for the metrics of a softmax output.
MF_HD void crossentropy_row_from_probabilities(const LossShape& shape, const float* p,
                                               const float* target, float* d_out, int n,
                                               float scale, float* values) {
  const int label = int(target[0]);
  const float weight = shape.weight(target);
  int argmax = 0;
  for (int j = 1; j < n; ++j)
    if (p[j] > p[argmax]) argmax = j;
  values[0] = -logf(fmaxf(p[label], 1e-30f)) * weight;
  for (int k = 0; k < shape.metrics.count; ++k) values[1 + k] = argmax == label ? 1.f : 0.f;
  for (int j = 0; j < n; ++j) d_out[j] = (p[j] - (j == label ? 1.f : 0.f)) * (scale * weight);
}

}  // namespace mf
