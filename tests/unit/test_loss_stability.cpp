// The cross-entropies stay finite and exact where a naive formula overflows: softmax cross-entropy
// with one logit far above the others, in every position (the last one too: a maximum taken over
// all but the last logit sums exp(1000) = inf), and binary cross-entropy of large logits. The
// expected values are computed by hand here, not by the code under test. The CUDA kernel runs the
// same loss_row(): tests/parity/test_loss_stability.cpp checks it on the device, with the same
// values.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.h"
#include "nn/model.h"
#include "test_support.h"

namespace mf {
namespace {

struct RowResult {
  float loss, correct;
  std::vector<float> d_out;
};

// The CPU backend's loss pass on one row.
RowResult loss_of_row(Loss loss, const std::vector<float>& out, const std::vector<float>& target) {
  CpuBackend cpu;
  const int n = int(out.size());
  const bool classes = loss == Loss::sparse_categorical_crossentropy;
  const LossShape shape{
      loss,
      false,
      classes ? 1 : n,
      {1, {classes ? Metric::sparse_categorical_accuracy : Metric::binary_accuracy}}};
  const MemberSettings settings;
  RowResult r{NAN, NAN, std::vector<float>(out.size(), NAN)};
  float values[2] = {NAN, NAN};
  cpu.loss(shape, out.data(), target.data(), r.d_out.data(), values, 1, n, &settings);
  r.loss = values[0], r.correct = values[1];
  return r;
}

TEST(SoftmaxCrossEntropy, TheLargestLogitLastIsFiniteAndExact) {
  // -log softmax({0, 0, 1000})[2] = log(1 + 2 exp(-1000)) = 0 in float; the probabilities are {0,
  // 0, 1}.
  const RowResult right =
      loss_of_row(Loss::sparse_categorical_crossentropy, {0.f, 0.f, 1000.f}, {2.f});
  EXPECT_EQ(right.loss, 0.f);
  EXPECT_EQ(right.correct, 1.f);
  EXPECT_EQ(right.d_out, (std::vector<float>{0.f, 0.f, 0.f}));  // (p - onehot) * 1/rows
  // Label 0: -log softmax[0] = 1000 + log(1 + 2 exp(-1000)) = 1000.
  const RowResult wrong =
      loss_of_row(Loss::sparse_categorical_crossentropy, {0.f, 0.f, 1000.f}, {0.f});
  EXPECT_EQ(wrong.loss, 1000.f);
  EXPECT_EQ(wrong.correct, 0.f);
  EXPECT_EQ(wrong.d_out, (std::vector<float>{-1.f, 0.f, 1.f}));
}

TEST(SoftmaxCrossEntropy, TheLargestLogitAnywhereIsFiniteAndExact) {
  for (int at = 0; at < 4; ++at) {
    SCOPED_TRACE("the large logit at " + std::to_string(at));
    std::vector<float> out(4, -3.f);
    out[size_t(at)] = 1000.f;
    const RowResult hit = loss_of_row(Loss::sparse_categorical_crossentropy, out, {float(at)});
    EXPECT_EQ(hit.loss, 0.f);
    EXPECT_EQ(hit.correct, 1.f);
    const int other = (at + 1) % 4;
    const RowResult miss = loss_of_row(Loss::sparse_categorical_crossentropy, out, {float(other)});
    EXPECT_EQ(miss.loss, 1003.f);  // 1000 - (-3)
    EXPECT_EQ(miss.correct, 0.f);
  }
}

// The loss is log(sum) + max - logit[label] in float, so where the logits are near 1000 it is exact
// to the float spacing there (2^-14, about 6e-5), not to that of the loss: the tolerance below is
// two of those. (Keras takes the logits less their maximum first, exact to the loss's own
// rounding.)
constexpr double kAt1000 = 2 * 6.103515625e-05;

TEST(SoftmaxCrossEntropy, AllLogitsLargeOrVeryNegative) {
  // Equal large logits: each probability 1/3, loss log 3; a tie goes to the first index.
  const RowResult equal =
      loss_of_row(Loss::sparse_categorical_crossentropy, {1000.f, 1000.f, 1000.f}, {1.f});
  EXPECT_NEAR(equal.loss, std::log(3.0), kAt1000);
  EXPECT_EQ(equal.correct, 0.f);
  for (float d : {equal.d_out[0], equal.d_out[2]}) EXPECT_NEAR(d, 1.0 / 3, 1e-7);
  EXPECT_NEAR(equal.d_out[1], 1.0 / 3 - 1, 1e-7);
  // Very negative logits, the largest last: exp(-1000) = 0 without the shift by the maximum.
  // -log softmax({-1000, -1000, -999})[2] = log(1 + 2 exp(-1)).
  const RowResult low =
      loss_of_row(Loss::sparse_categorical_crossentropy, {-1000.f, -1000.f, -999.f}, {2.f});
  EXPECT_NEAR(low.loss, std::log1p(2 * std::exp(-1.0)), kAt1000);
  EXPECT_EQ(low.correct, 1.f);
  // Moderate logits, as a check of the formula: -log softmax({1, 2, 3})[0] = log(e + e^2 + e^3)
  // - 1.
  const RowResult moderate =
      loss_of_row(Loss::sparse_categorical_crossentropy, {1.f, 2.f, 3.f}, {0.f});
  EXPECT_NEAR(moderate.loss, std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 1, 1e-6);
}

TEST(BinaryCrossEntropy, LargeLogitsAreFiniteAndExact) {
  // max(z, 0) - z t + log(1 + exp(-|z|)), averaged over the 4 outputs of the row.
  const RowResult r = loss_of_row(Loss::binary_crossentropy, {1000.f, -1000.f, 1000.f, -1000.f},
                                  {1.f, 0.f, 0.f, 1.f});
  EXPECT_EQ(r.loss, (0.f + 0.f + 1000.f + 1000.f) / 4);
  EXPECT_EQ(r.correct, 0.5f);
  // (sigmoid - t) / (rows * outputs)
  EXPECT_EQ(r.d_out, (std::vector<float>{0.f, 0.f, 0.25f, -0.25f}));
}

// Through a model on the CPU backend: one input of 1 through a 3-unit softmax layer with kernel
// {0, 0, 1000} gives the logits {0, 0, 1000}; evaluating labels 2 and 0 sums the losses 0 and 1000.
TEST(SoftmaxCrossEntropy, AModelWhoseLastLogitIsLargestEvaluatesFinite) {
  CpuBackend cpu;
  ModelSpec spec =
      test::mlp(1, {{3, Activation::softmax}}, Loss::sparse_categorical_crossentropy, "large");
  spec.fit.batch_size = 2;
  Model model(spec, cpu);
  model.set_params({0.f, 0.f, 1000.f, 0.f, 0.f, 0.f});  // kernel (1x3), then bias (3)
  const std::vector<float> x = {1.f, 1.f}, y = {2.f, 0.f};
  model.reset_totals();
  model.evaluate_batch(x.data(), y.data(), 2);
  const std::vector<double> totals = model.read_totals().front();
  EXPECT_EQ(totals[0], 1000.0);  // the loss
  EXPECT_EQ(totals[1], 1.0);     // the accuracy
}

}  // namespace
}  // namespace mf
