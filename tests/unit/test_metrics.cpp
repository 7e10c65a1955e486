// Accuracy as Keras defines it, at the ties where a shortcut would differ
// (keras.metrics.binary_accuracy and sparse_categorical_accuracy, float32), and the counts a row
// gives precision and recall (keras.metrics.Precision and Recall at their 0.5 threshold).
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace mf
