// The loss kernel where a naive formula overflows, against values computed by hand (not only
// against the CPU backend, which runs the same loss_row()): softmax cross-entropy with one logit
// far above the others, the last one among them (a maximum taken over all but the last logit sums
// exp(1000) = inf), and binary cross-entropy of large logits. tests/unit/test_loss_stability.cpp
// checks the CPU backend.
#include "kernels/member_settings.h"
#include "tests/parity/backend_pair.h"
#include "tests/parity/device_under_test.h"

namespace mf::test {
namespace {

class LossStability : public DeviceTest {
 protected:
  struct Rows {
    std::vector<float> loss, correct, d_out;
  };
  // The device's loss pass over rows of `n` outputs; both forms, the loss alone and the loss with
  // the accumulation in one launch, must give the same rows (and the latter their sums in
  // `totals`).
  Rows run(Loss loss, const std::vector<float>& out, const std::vector<float>& target, int n,
           std::vector<double>* totals = nullptr) {
    const int m = int(out.size()) / n;
    const bool classes = loss == Loss::sparse_categorical_crossentropy;
    const LossShape shape{
        loss,
        false,
        classes ? 1 : n,
        {1, {classes ? Metric::sparse_categorical_accuracy : Metric::binary_accuracy}}};
    Buffer<float> Out(*device_, out), T(*device_, target), dOut(*device_, nans(out.size())),
        V(*device_, nans(2 * m));
    Buffer<MemberSettings> Settings(*device_, {MemberSettings{}});
    device_->loss(shape, Out.get(), T.get(), dOut.get(), V.get(), m, n, Settings.get());
    const std::vector<float> values = V.read();
    Rows rows{{}, {}, dOut.read()};
    for (int r = 0; r < m; ++r)
      rows.loss.push_back(values[2 * r]), rows.correct.push_back(values[2 * r + 1]);
    if (totals) {
      Buffer<float> dOut2(*device_, nans(out.size())), V2(*device_, nans(2 * m));
      Buffer<double> Totals(*device_, {0, 0});
      device_->loss_and_accumulate(shape, Out.get(), T.get(), dOut2.get(), V2.get(), m, n,
                                   Totals.get(), Settings.get());
      EXPECT_EQ(V2.read(), values);
      EXPECT_EQ(dOut2.read(), rows.d_out);
      *totals = Totals.read();
    }
    return rows;
  }
};

TEST_F(LossStability, SoftmaxCrossEntropyWithTheLargestLogitLast) {
  // {0, 0, 1000} with labels 2 (right) and 0 (wrong); then the large logit first, {1000, -3, -3}
  // with label 0 (right), and in the middle, {-3, 1000, -3} with label 2 (wrong).
  const std::vector<float> out = {0, 0, 1000, 0, 0, 1000, 1000, -3, -3, -3, 1000, -3};
  const std::vector<float> labels = {2, 0, 0, 2};
  std::vector<double> totals;
  const Rows r = run(Loss::sparse_categorical_crossentropy, out, labels, 3, &totals);
  EXPECT_EQ(r.loss, (std::vector<float>{0, 1000, 0, 1003}));
  EXPECT_EQ(r.correct, (std::vector<float>{1, 0, 1, 0}));
  const float s = 1.f / 4;  // d(mean over 4 rows)/d(logit) = (p - onehot) / 4
  EXPECT_EQ(r.d_out, (std::vector<float>{0, 0, 0, -s, 0, s, 0, 0, 0, 0, s, -s}));
  EXPECT_EQ(totals, (std::vector<double>{2003, 2}));
}

TEST_F(LossStability, BinaryCrossEntropyOfLargeLogits) {
  const Rows r = run(Loss::binary_crossentropy, {1000, -1000, 1000, -1000}, {1, 0, 0, 1}, 4);
  EXPECT_EQ(r.loss, (std::vector<float>{500}));  // (0 + 0 + 1000 + 1000) / 4
  EXPECT_EQ(r.correct, (std::vector<float>{0.5f}));
  EXPECT_EQ(r.d_out, (std::vector<float>{0, 0, 0.25f, -0.25f}));
}

}  // namespace
}  // namespace mf::test
