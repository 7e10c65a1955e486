// Accuracy as Keras defines it, at the ties where a shortcut would differ
// (keras.metrics.binary_accuracy and sparse_categorical_accuracy, float32), the counts a row
// gives precision and recall (keras.metrics.Precision and Recall at their 0.5 threshold), and AUC's
// buckets and area (keras.metrics.AUC's defaults), computed by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "tests/loss_shapes.h"

namespace mf {
namespace {

// Row accuracies of `logits` (m, n) against `target` for `loss`, from the CPU backend's loss pass.
std::vector<float> row_accuracy(Loss loss, const std::vector<float>& logits,
                                const std::vector<float>& target, int m, int n) {
  CpuBackend cpu;
  const MemberSettings settings;
  std::vector<float> d_out(logits.size()), values(2 * size_t(m)), correct;
  cpu.loss(test::default_loss_shape(loss, n), logits.data(), target.data(), d_out.data(),
           values.data(), m, n, &settings);
  for (int r = 0; r < m; ++r) correct.push_back(values[2 * size_t(r) + 1]);
  return correct;
}

// binary_accuracy thresholds the probability: sigmoid(1e-8) is exactly 0.5 in float32, not above
// it, so the prediction is 0, although the logit is above 0. sigmoid(1e-7) is 0.50000003: 1.
TEST(Metrics, BinaryAccuracyThresholdsTheFloat32Probability) {
  const std::vector<float> logits = {1e-8f, 1e-8f, 1e-7f, 0.f, -1e-8f};
  const std::vector<float> labels = {1.f, 0.f, 1.f, 0.f, 0.f};
  EXPECT_EQ(row_accuracy(Loss::binary_crossentropy, logits, labels, 5, 1),
            (std::vector<float>{0.f, 1.f, 1.f, 1.f, 1.f}));
}

// sparse_categorical_accuracy takes the first argmax of the probabilities: logits 0 and 1e-9
// differ, but exp(-1e-9) is 1 in float32, so both probabilities are the same float and class 0 wins
// the tie.
TEST(Metrics, SparseCategoricalAccuracyTakesTheFirstArgmaxOfTheProbabilities) {
  const float a = 0.f, b = 1e-9f;
  ASSERT_NE(a, b);
  const std::vector<float> logits = {a, b, -5.f, a, b, -5.f};
  const std::vector<float> labels = {0.f, 1.f};
  EXPECT_EQ(row_accuracy(Loss::sparse_categorical_crossentropy, logits, labels, 2, 3),
            (std::vector<float>{1.f, 0.f}));
}

// Each output counts for itself: a true positive is a target that is not 0 whose probability is
// above 0.5 (sigmoid(1e-8) is 0.5 in float32: not above). Precision's row values are its true
// positives and its predicted positives, recall's its true positives and its actual positives.
TEST(Metrics, PrecisionAndRecallCountEachOutputAboveTheThreshold) {
  const LossShape shape{
      Loss::binary_crossentropy, false, 3, {2, {Metric::precision, Metric::recall}}};
  ASSERT_EQ(shape.values(), 5);
  const std::vector<float> logits = {2.f, -1.f, 0.5f, -3.f, -3.f, -3.f, 1e-8f, 4.f, 1.f};
  const std::vector<float> labels = {1.f, 1.f, 0.f, 0.f, 0.f, 0.f, 1.f, 1.f, 1.f};
  CpuBackend cpu;
  const MemberSettings settings;
  std::vector<float> d_out(logits.size()), values(5 * 3);
  cpu.loss(shape, logits.data(), labels.data(), d_out.data(), values.data(), 3, 3, &settings);
  const std::vector<float> counts(values.begin() + 1, values.begin() + 5);
  EXPECT_EQ(counts, (std::vector<float>{1, 2, 1, 2}));  // predicted 1 0 1, actual 1 1 0
  EXPECT_EQ(std::vector<float>(values.begin() + 6, values.begin() + 10),
            (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(std::vector<float>(values.begin() + 11, values.begin() + 15),
            (std::vector<float>{2, 2, 2, 3}));  // sigmoid(1e-8) is no prediction
}

// A row's AUC code is its bucket ceil(199 p) - 1 (at least 0), plus 200 for a negative target.
TEST(Metrics, AucCodesAreKerasBuckets) {
  EXPECT_EQ(auc_code(1.f, 0.9f), 179.f);        // ceil(179.1) - 1
  EXPECT_EQ(auc_code(0.f, 0.8f), 200.f + 159);  // ceil(159.2) - 1, a negative
  EXPECT_EQ(auc_code(1.f, 0.f), 0.f);           // -1, raised to 0
  EXPECT_EQ(auc_code(1.f, 1.f), 198.f);         // ceil(199) - 1
  EXPECT_EQ(auc_code(1.f, 7.f), 198.f);         // clipped to 1 first
  EXPECT_EQ(auc_code(0.f, -3.f), 200.f);        // clipped to 0
  EXPECT_EQ(auc_code(0.3f, 0.5f), 99.f);  // a soft label is a positive: Keras casts it to bool
}

// With no positive and negative in one bucket the interpolated ROC area is the share of (positive,
// negative) pairs ordered right; a positive and a negative in one bucket count half.
TEST(Metrics, AucIsTheShareOfPairsOrderedRight) {
  const auto area = [](std::vector<std::pair<float, float>> rows) {  // (target, prediction)
    std::vector<double> bins(size_t(bins_of(Metric::auc)), 0.0);
    for (const auto& [t, p] : rows) bins[size_t(auc_code(t, p))] += 1;
    return roc_auc(bins.data());
  };
  EXPECT_DOUBLE_EQ(area({{1, 0.9f}, {0, 0.8f}, {1, 0.3f}, {0, 0.1f}}), 0.75);
  EXPECT_DOUBLE_EQ(area({{1, 0.9f}, {0, 0.1f}}), 1.0);
  EXPECT_DOUBLE_EQ(area({{0, 0.9f}, {1, 0.1f}}), 0.0);
  EXPECT_DOUBLE_EQ(area({{1, 0.5f}, {0, 0.5f}}), 0.5);
  EXPECT_DOUBLE_EQ(area({{1, 0.6f}, {0, 0.6f}, {0, 0.2f}}), 0.75);
  EXPECT_DOUBLE_EQ(area({{1, 0.6f}, {1, 0.2f}}), 0.0) << "no negatives: divide_no_nan's 0";
}

// The loss pass writes the row's code as AUC's value, beside precision's counts.
TEST(Metrics, TheLossPassWritesTheRowsAucCode) {
  const LossShape shape{Loss::binary_crossentropy, false, 1, {2, {Metric::precision, Metric::auc}}};
  ASSERT_EQ(shape.values(), 4);
  ASSERT_EQ(shape.totals(), 4 + 400);
  const std::vector<float> logits = {2.f, -1.f}, labels = {1.f, 1.f};
  CpuBackend cpu;
  const MemberSettings settings;
  std::vector<float> d_out(2), values(8);
  cpu.loss(shape, logits.data(), labels.data(), d_out.data(), values.data(), 2, 1, &settings);
  EXPECT_EQ(values[3], auc_code(1.f, 1.f / (1.f + std::exp(-2.f))));  // sigmoid(2) = 0.88: 175
  EXPECT_EQ(values[3], 175.f);
  EXPECT_EQ(values[7], 53.f);  // sigmoid(-1) = 0.269: ceil(53.5) - 1
}

}  // namespace
}  // namespace mf
