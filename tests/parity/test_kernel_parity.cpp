// Every hand-written kernel against the CPU backend on the same inputs, on
// shapes chosen to hit tile edges (1, primes, one past a tile) and every GEMM
// configuration the dispatcher can choose (each product with each tile size).
// Tolerances: a sum of K terms in [-1,1] added in another order differs by up
// to about an ulp per term, and a sum that cancels to near zero keeps that
// absolute error, so sums get max(1e-5, 1.2e-7·K); element-wise math uses the
// same formulas and matches to 1e-6.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <ostream>
#include <set>
#include <tuple>

#include "kernels/kernels.h"
#include "kernels/member_settings.h"
#include "tests/parity/backend_pair.h"
#include "tests/parity/device_under_test.h"
#include "tests/parity/test_sizes.h"

namespace mf::test {
namespace {

class KernelParity : public DeviceTest {
 protected:
  CpuBackend cpu_;
};

float sum_tolerance(int terms) { return std::max(1e-5f, 1.2e-7f * float(terms)); }

struct Shape {
  int m, k, n;
};
std::ostream& operator<<(std::ostream& os, const Shape& s) {
  return os << s.m << "x" << s.k << "x" << s.n;
}

const Shape kShapes[] = {{1, 1, 1}, {3, 5, 7}, {33, 17, 65}, {32, 784, 10}, {70, 100, 130}};
// The first four element-wise activations, on every shape and split; the others on the small shapes
// (the epilogue is one function for all of them: each only needs its formula checked).
const Activation kActivations[] = {Activation::linear, Activation::relu, Activation::sigmoid,
                                   Activation::tanh};
const Activation kMoreActivations[] = {
    Activation::gelu,     Activation::swish,      Activation::elu,  Activation::selu,
    Activation::softplus, Activation::leaky_relu, Activation::mish, Activation::softsign};
const Shape kSmallShapes[] = {{1, 1, 1}, {3, 5, 7}, {33, 17, 65}};
// Each product once with a C of >= 128 64x64 tiles and an inner dimension of 3, so that the large
// tile configuration runs for all three at little cost (host execution runs every thread).
const Shape kLargeForward{1030, 3, 520}, kLargeBackwardInput{1030, 520, 3},
    kLargeBackwardWeights{3, 1030, 520};

// The products' C shapes: forward Y(m,n), backward dX(m,k) and dW(k,n).
TEST(KernelParityShapes, RunEveryGemmConfiguration) {
  std::set<std::pair<int, GemmTile>> seen;  // (product, tile)
  for (const Shape& s : kShapes) {
    seen.insert({0, gemm_tile(s.m, s.n)});
    seen.insert({1, gemm_tile(s.m, s.k)});
    seen.insert({2, gemm_tile(s.k, s.n)});
  }
  seen.insert({0, gemm_tile(kLargeForward.m, kLargeForward.n)});
  seen.insert({1, gemm_tile(kLargeBackwardInput.m, kLargeBackwardInput.k)});
  seen.insert({2, gemm_tile(kLargeBackwardWeights.k, kLargeBackwardWeights.n)});
  EXPECT_EQ(seen.size(), 6u) << "each of the 3 products with each of the 2 tile configurations";
}

class DenseParity : public KernelParity {
 protected:
  void forward(const Shape& s, Activation act) {
    const auto x = random_vector(size_t(s.m) * s.k, 1), w = random_vector(size_t(s.k) * s.n, 2),
               b = random_vector(size_t(s.n), 3);
    std::vector<float> want(size_t(s.m) * s.n), want_z(want.size());
    cpu_.dense_forward(x.data(), w.data(), b.data(), want.data(), want_z.data(), s.m, s.k, s.n,
                       act);
    Buffer<float> X(*device_, x), W(*device_, w), B(*device_, b), Y(*device_, nans(want.size())),
        Z(*device_, nans(want.size()));
    device_->dense_forward(X.get(), W.get(), B.get(), Y.get(), Z.get(), s.m, s.k, s.n, act);
    expect_close(want, Y.read(), sum_tolerance(s.k), "Y");
    expect_close(want_z, Z.read(), sum_tolerance(s.k), "Z");
  }
  // Without a bias: Y = act(X W), the epilogue adds nothing.
  void forward_without_bias(const Shape& s, Activation act) {
    const auto x = random_vector(size_t(s.m) * s.k, 1), w = random_vector(size_t(s.k) * s.n, 2);
    std::vector<float> want(size_t(s.m) * s.n);
    cpu_.dense_forward(x.data(), w.data(), nullptr, want.data(), nullptr, s.m, s.k, s.n, act);
    Buffer<float> X(*device_, x), W(*device_, w), Y(*device_, nans(want.size()));
    device_->dense_forward(X.get(), W.get(), nullptr, Y.get(), nullptr, s.m, s.k, s.n, act);
    expect_close(want, Y.read(), sum_tolerance(s.k), "Y");
  }
  // dX = dZ·Wᵀ, and with `below` (not linear) through that activation's backward, from outputs Y of
  // the layer below in the activation's range: the product's epilogue on the device.
  void backward_input(const Shape& s, Activation below = Activation::linear) {
    const auto w = random_vector(size_t(s.k) * s.n, 5), dz = random_vector(size_t(s.m) * s.n, 6),
               z = random_vector(size_t(s.m) * s.k, 9, -2.f, 2.f);
    std::vector<float> y(z.size());  // the layer below's output, from its pre-activation
    for (size_t i = 0; i < z.size(); ++i) y[i] = activate(below, z[i]);
    std::vector<float> dx(size_t(s.m) * s.k);
    cpu_.dense_backward_input(dz.data(), w.data(), dx.data(), s.m, s.k, s.n,
                              {below, y.data(), z.data()});
    Buffer<float> W(*device_, w), dZ(*device_, dz), dX(*device_, nans(dx.size())), Y(*device_, y),
        Z(*device_, z);
    device_->dense_backward_input(dZ.get(), W.get(), dX.get(), s.m, s.k, s.n,
                                  {below, Y.get(), Z.get()});
    expect_close(dx, dX.read(), sum_tolerance(s.n), "dX");
  }
  void backward_params(const Shape& s) {
    const auto x = random_vector(size_t(s.m) * s.k, 4), dz = random_vector(size_t(s.m) * s.n, 6);
    std::vector<float> dw(size_t(s.k) * s.n), db(size_t(s.n));
    cpu_.dense_backward_params(x.data(), dz.data(), dw.data(), db.data(), s.m, s.k, s.n);
    Buffer<float> X(*device_, x), dZ(*device_, dz), dW(*device_, nans(dw.size())),
        dB(*device_, nans(db.size()));
    device_->dense_backward_params(X.get(), dZ.get(), dW.get(), dB.get(), s.m, s.k, s.n);
    expect_close(dw, dW.read(), sum_tolerance(s.m), "dW");
    expect_close(db, dB.read(), sum_tolerance(s.m), "db");
  }
};

TEST_F(DenseParity, ForwardWithEveryActivation) {
  for (const Shape& s : kShapes)
    for (Activation act : kActivations) {
      forward(s, act);
      if (HasFailure()) FAIL() << "shape " << s << " act " << int(act);
    }
  for (const Shape& s : kSmallShapes)
    for (Activation act : kMoreActivations) {
      forward(s, act);
      if (HasFailure()) FAIL() << "shape " << s << " act " << int(act);
    }
}

TEST_F(DenseParity, ForwardWithoutBias) {
  for (const Shape& s : kShapes) {
    forward_without_bias(s, Activation::relu);
    forward_without_bias(s, Activation::linear);
    if (HasFailure()) FAIL() << "shape " << s;
  }
}

// use_bias false: no bias gradient, the weights' the same.
TEST_F(DenseParity, BackwardParamsWithoutBias) {
  const Shape s{33, 17, 65};
  const auto x = random_vector(size_t(s.m) * s.k, 4), dz = random_vector(size_t(s.m) * s.n, 6);
  std::vector<float> dw(size_t(s.k) * s.n);
  cpu_.dense_backward_params(x.data(), dz.data(), dw.data(), nullptr, s.m, s.k, s.n);
  Buffer<float> X(*device_, x), dZ(*device_, dz), dW(*device_, nans(dw.size()));
  device_->dense_backward_params(X.get(), dZ.get(), dW.get(), nullptr, s.m, s.k, s.n);
  expect_close(dw, dW.read(), sum_tolerance(s.m), "dW");
}

TEST_F(DenseParity, Backward) {
  for (const Shape& s : kShapes) {
    backward_input(s);
    backward_params(s);
    if (HasFailure()) FAIL() << "shape " << s;
  }
}

// A batch read by row index from the data set, where the device's products can (fuses_gather):
// the first layer's forward and weight gradient equal the CPU's on the gathered batch.
TEST_F(DenseParity, FirstLayerReadsTheBatchByRowIndex) {
  if (!device_->fuses_gather()) GTEST_SKIP() << "this device's products read gathered batches";
  for (const Shape& s : kShapes) {
    const int data_rows = s.m + 5;
    const auto data = random_vector(size_t(data_rows) * s.k, 18),
               w = random_vector(size_t(s.k) * s.n, 2), b = random_vector(size_t(s.n), 3),
               dz = random_vector(size_t(s.m) * s.n, 6);
    std::vector<int> rows(s.m);
    std::vector<float> batch(size_t(s.m) * s.k);
    for (int r = 0; r < s.m; ++r) {
      rows[r] = (r * 7 + 3) % data_rows;
      std::copy_n(data.begin() + int64_t(rows[r]) * s.k, s.k, batch.begin() + int64_t(r) * s.k);
    }
    std::vector<float> y(size_t(s.m) * s.n), dw(size_t(s.k) * s.n), db(size_t(s.n));
    cpu_.dense_forward(batch.data(), w.data(), b.data(), y.data(), nullptr, s.m, s.k, s.n,
                       Activation::tanh);
    cpu_.dense_backward_params(batch.data(), dz.data(), dw.data(), db.data(), s.m, s.k, s.n);
    Buffer<float> Data(*device_, data), W(*device_, w), B(*device_, b), dZ(*device_, dz),
        Y(*device_, nans(y.size())), dW(*device_, nans(dw.size())), dB(*device_, nans(db.size()));
    Buffer<int> Rows(*device_, rows);
    device_->dense_forward(Data.get(), W.get(), B.get(), Y.get(), nullptr, s.m, s.k, s.n,
                           Activation::tanh, Rows.get());
    device_->dense_backward_params(Data.get(), dZ.get(), dW.get(), dB.get(), s.m, s.k, s.n,
                                   Rows.get());
    expect_close(y, Y.read(), sum_tolerance(s.k), "Y");
    expect_close(dw, dW.read(), sum_tolerance(s.m), "dW");
    expect_close(db, dB.read(), sum_tolerance(s.m), "db");
    if (HasFailure()) FAIL() << "shape " << s;
  }
}

TEST_F(DenseParity, BackwardInputThroughEveryActivation) {
  for (const Shape& s : kShapes)
    for (Activation below : {Activation::relu, Activation::tanh, Activation::sigmoid}) {
      backward_input(s, below);
      if (HasFailure()) FAIL() << "shape " << s << " act " << int(below);
    }
  for (const Shape& s : kSmallShapes)
    for (Activation below : kMoreActivations) {
      backward_input(s, below);
      if (HasFailure()) FAIL() << "shape " << s << " act " << int(below);
    }
}

TEST_F(DenseParity, LargeTiles) {
  forward(kLargeForward, Activation::relu);
  backward_input(kLargeBackwardInput);
  backward_input(kLargeBackwardInput, Activation::tanh);
  backward_params(kLargeBackwardWeights);
}

// The MLPs' shapes whose products the backend splits along K under host execution (it plans for an
// H200's 132 SMs, kernels/gemm_plan.h): forward C(m,n) with K = k, backward dX(m,k) with K = n,
// dW(k,n) with K = m. At the small sizes (tests/parity/test_sizes.h) products of one to six tiles,
// each with an edge, that split as much (S = 8, 4, 3): the same kernels and epilogues at a fraction
// of the threads' work. tests/hostexec/test_split_k.cpp checks the split path's packs and
// determinism.
TEST_F(DenseParity, SplitK) {
  const std::vector<Shape> forwards =
                               small_sizes()
                                   ? std::vector<Shape>{{20, 515, 33}, {40, 300, 10}, {32, 256, 10}}
                                   : std::vector<Shape>{{32, 784, 256},
                                                        {128, 784, 100},
                                                        {32, 256, 10}},
                           inputs = small_sizes()
                                        ? std::vector<Shape>{{20, 40, 515}, {33, 70, 200}}
                                        : std::vector<Shape>{{32, 784, 256}, {128, 100, 256}},
                           params = small_sizes()
                                        ? std::vector<Shape>{{520, 40, 10}, {300, 33, 10}}
                                        : std::vector<Shape>{{1024, 256, 10}, {1024, 100, 10}};
  for (const Shape& s : forwards) {
    ASSERT_GT(gemm_plan(s.m, s.k, s.n, 1, kHostExecSms).splits, 1) << s;
    for (Activation act : kActivations) forward(s, act);
    if (HasFailure()) FAIL() << "forward " << s;
  }
  for (const Shape& s : inputs) {
    ASSERT_GT(gemm_plan(s.m, s.n, s.k, 1, kHostExecSms).splits, 1) << s;
    for (Activation below : kActivations) backward_input(s, below);
    if (HasFailure()) FAIL() << "backward_input " << s;
  }
  for (const Shape& s : params) {
    ASSERT_GT(gemm_plan(s.k, s.m, s.n, 1, kHostExecSms, true).splits, 1) << s;
    backward_params(s);
    if (HasFailure()) FAIL() << "backward_params " << s;
  }
}

// The members' loss settings as the kernels read them: label smoothing 0.1 and huber's delta 0.7,
// where a case uses them.
MemberSettings loss_settings(float label_smoothing, float delta) {
  MemberSettings s;
  s.loss.label_smoothing = label_smoothing,
  s.loss.one_minus_label_smoothing = 1.f - label_smoothing;
  s.loss.half_label_smoothing = 0.5f * label_smoothing, s.loss.delta = delta;
  return s;
}

// Every loss with the metrics it takes, from logits or from activations, on 130 rows (two blocks of
// rows, the second partial): the row values and the gradient equal the CPU's.
TEST_F(KernelParity, LossesAndGradients) {
  const int m = 130, classes = 10;
  struct Case {
    LossShape shape;
    int n;
    std::vector<float> target;
    float label_smoothing = 0;
  };
  std::vector<float> labels(m), binary(m * 3), values = random_vector(m * 2, 9),
                                               one_hot(size_t(m) * classes);
  for (int r = 0; r < m; ++r)
    labels[r] = float(r % classes), one_hot[size_t(r) * classes + r % classes] = 1.f;
  for (int i = 0; i < m * 3; ++i) binary[i] = float(i % 2);
  const MetricList accuracies{2,
                              {Metric::sparse_categorical_accuracy, Metric::categorical_accuracy}};
  const MetricList regression{
      3, {Metric::mean_absolute_error, Metric::mean_squared_error, Metric::binary_accuracy}};
  const Case cases[] = {
      {{Loss::sparse_categorical_crossentropy, false, 1, accuracies}, classes, labels},
      {{Loss::sparse_categorical_crossentropy, true, 1, accuracies}, classes, labels},
      {{Loss::categorical_crossentropy, false, classes, {1, {Metric::categorical_accuracy}}},
       classes,
       one_hot,
       0.1f},
      {{Loss::categorical_crossentropy, false, 1, accuracies}, classes, labels, 0.1f},
      {{Loss::binary_crossentropy, false, 3, {1, {Metric::binary_accuracy}}}, 3, binary},
      {{Loss::binary_crossentropy, true, 3, regression}, 3, binary, 0.2f},
      {{Loss::mse, false, 2, regression}, 2, values},
      {{Loss::mean_absolute_error, false, 2, regression}, 2, values},
      {{Loss::huber, false, 2, regression}, 2, values},
      {{Loss::log_cosh, false, 2, regression}, 2, values},
      {{Loss::mean_squared_logarithmic_error, false, 2, regression}, 2, values},
      {{Loss::binary_crossentropy,
        false,
        3,
        {4,
         {Metric::precision, Metric::mean_squared_error, Metric::recall, Metric::binary_accuracy}}},
       3,
       binary},
      {{Loss::categorical_crossentropy, false, classes, {2, {Metric::precision, Metric::recall}}},
       classes,
       one_hot},
  };
  for (const Case& c : cases) {
    const auto out = random_vector(size_t(m) * c.n, 10, -4.f, 4.f);
    const MemberSettings settings = loss_settings(c.label_smoothing, 0.7f);
    const int width = c.shape.values();
    std::vector<float> d_out(out.size()), row(size_t(m) * width);
    cpu_.loss(c.shape, out.data(), c.target.data(), d_out.data(), row.data(), m, c.n, &settings);
    Buffer<float> Out(*device_, out), T(*device_, c.target), dOut(*device_, nans(d_out.size())),
        Row(*device_, nans(row.size()));
    Buffer<MemberSettings> Settings(*device_, {settings});
    device_->loss(c.shape, Out.get(), T.get(), dOut.get(), Row.get(), m, c.n, Settings.get());
    expect_close(d_out, dOut.read(), 1e-6f, "d_out");
    expect_close(row, Row.read(), 1e-6f, "row values");
    if (HasFailure())
      FAIL() << "loss " << int(c.shape.loss) << " from_logits " << c.shape.from_logits;
  }
}

// Keras's sample weights (kernels/loss_row.h): a row's loss and gradient times its weight, its
// metrics as they were; a weight column the pass does not apply (class weights in evaluation)
// changes nothing but the stride. The CUDA kernel gives the CPU's values.
TEST_F(KernelParity, WeightedLossesScaleEachRowAndItsGradient) {
  const int m = 130, classes = 10;
  std::vector<float> labels(m), one_hot(size_t(m) * classes), binary(m * 3);
  const std::vector<float> values = random_vector(m * 2, 9);
  for (int r = 0; r < m; ++r)
    labels[r] = float(r % classes), one_hot[size_t(r) * classes + r % classes] = 1.f;
  for (int i = 0; i < m * 3; ++i) binary[i] = float(i % 2);
  std::vector<float> weights = random_vector(m, 12, 0.f, 3.f);
  weights[3] = 0.f, weights[7] = 1.f;
  const MetricList accuracy{1, {Metric::sparse_categorical_accuracy}};
  const MetricList regression{2, {Metric::mean_absolute_error, Metric::mean_squared_error}};
  const struct {
    LossShape shape;
    int n;
    const std::vector<float>& target;
  } cases[] = {
      {{Loss::sparse_categorical_crossentropy, false, 1, accuracy}, classes, labels},
      {{Loss::categorical_crossentropy, false, classes, {1, {Metric::categorical_accuracy}}},
       classes,
       one_hot},
      {{Loss::binary_crossentropy, false, 3, {1, {Metric::binary_accuracy}}}, 3, binary},
      {{Loss::mse, false, 2, regression}, 2, values},
      {{Loss::huber, false, 2, regression}, 2, values},
  };
  for (const auto& c : cases) {
    const auto out = random_vector(size_t(m) * c.n, 10, -4.f, 4.f);
    const MemberSettings settings = loss_settings(0, 1);
    const int width = c.shape.values();
    std::vector<float> plain_d(out.size()), plain(size_t(m) * width);
    cpu_.loss(c.shape, out.data(), c.target.data(), plain_d.data(), plain.data(), m, c.n,
              &settings);
    const size_t cols = size_t(c.shape.target_cols);
    std::vector<float> target;  // each row's targets, then its weight
    for (size_t r = 0; r < size_t(m); ++r) {
      target.insert(target.end(), c.target.begin() + std::ptrdiff_t(r * cols),
                    c.target.begin() + std::ptrdiff_t((r + 1) * cols));
      target.push_back(weights[r]);
    }
    for (const bool weighted : {true, false}) {
      LossShape shape = c.shape;
      shape.weight_column = true, shape.weighted = weighted;
      std::vector<float> d_out(out.size()), row(size_t(m) * width);
      cpu_.loss(shape, out.data(), target.data(), d_out.data(), row.data(), m, c.n, &settings);
      for (int r = 0; r < m; ++r) {
        const float w = weighted ? weights[size_t(r)] : 1.f;
        const size_t at = size_t(r) * width;
        EXPECT_EQ(row[at], plain[at] * w) << "row " << r;
        for (int k = 1; k < width; ++k) EXPECT_EQ(row[at + k], plain[at + k]) << "metric " << k;
        for (int j = 0; j < c.n; ++j) {
          const size_t i = size_t(r) * c.n + j;
          EXPECT_NEAR(d_out[i], plain_d[i] * w, 1e-6f * std::fabs(plain_d[i] * w)) << i;
        }
      }
      Buffer<float> Out(*device_, out), T(*device_, target), dOut(*device_, nans(d_out.size())),
          Row(*device_, nans(row.size()));
      Buffer<MemberSettings> Settings(*device_, {settings});
      device_->loss(shape, Out.get(), T.get(), dOut.get(), Row.get(), m, c.n, Settings.get());
      expect_close(d_out, dOut.read(), 1e-6f, "d_out");
      expect_close(row, Row.read(), 1e-6f, "row values");
      if (HasFailure())
        FAIL() << "loss " << int(c.shape.loss) << (weighted ? " weighted" : " column skipped");
    }
  }
}

TEST_F(KernelParity, AccumulateIsDeterministic) {
  const int m = 300, count = 3;  // more rows than threads; the loss and two metrics
  const auto values = random_vector(size_t(m) * count, 11, 0.f, 3.f);
  std::vector<double> want = {1.5, 2.5, 3.5};
  cpu_.accumulate(values.data(), count, m, want.data());
  Buffer<float> V(*device_, values);
  Buffer<double> totals(*device_, {1.5, 2.5, 3.5});
  device_->accumulate(V.get(), count, m, totals.get());
  const std::vector<double> first = totals.read();
  for (int v = 0; v < count; ++v) EXPECT_NEAR(first[v], want[v], 1e-9 * want[v]) << v;
  device_->accumulate(V.get(), count, m, totals.get());
  const std::vector<double> second = totals.read();
  EXPECT_EQ(second[0] - first[0], first[0] - 1.5);  // the same sum, bit for bit
}

// AUC's histogram: the loss pass's codes (a binary classifier's, with AUC beside its loss) counted
// into the bins on the device as on the CPU, every bin the same whole number, for more rows than a
// block's threads and more bins than threads; added, not set.
TEST_F(KernelParity, CountCodes) {
  const LossShape shape{Loss::binary_crossentropy, false, 1, {1, {Metric::auc}}};
  const int bins = bins_of(Metric::auc), m = 300;
  ASSERT_EQ(shape.totals(), shape.values() + bins);
  const auto out = random_vector(size_t(m), 19, -6.f, 6.f);
  std::vector<float> labels(out.size());
  for (int r = 0; r < m; ++r) labels[size_t(r)] = float(r % 3 == 0);
  const MemberSettings settings;
  std::vector<float> d_out(out.size()), row(size_t(m) * 2);
  cpu_.loss(shape, out.data(), labels.data(), d_out.data(), row.data(), m, 1, &settings);
  std::vector<double> want(size_t(bins), 1.0);
  cpu_.count_codes(row.data(), 2, 1, m, want.data(), bins);
  EXPECT_EQ(std::accumulate(want.begin(), want.end(), 0.0), double(m + bins));
  Buffer<float> V(*device_, row);
  Buffer<double> got(*device_, std::vector<double>(size_t(bins), 1.0));
  device_->count_codes(V.get(), 2, 1, m, got.get(), bins);
  EXPECT_EQ(got.read(), want);
}

// The CPU's loss pass (sparse categorical cross-entropy and its accuracy) and its totals, added to
// `totals`: the reference of the folded loss passes below.
struct LossReference {
  std::vector<float> d_out, values;
  std::vector<double> totals;
};
const LossShape kClassifier{
    Loss::sparse_categorical_crossentropy, false, 1, {1, {Metric::sparse_categorical_accuracy}}};
LossReference cpu_loss_pass(CpuBackend& cpu, const std::vector<float>& out,
                            const std::vector<float>& targets, int m, int classes,
                            std::vector<double> totals) {
  const MemberSettings settings;
  LossReference r{std::vector<float>(out.size()), std::vector<float>(size_t(m) * 2),
                  std::move(totals)};
  cpu.loss(kClassifier, out.data(), targets.data(), r.d_out.data(), r.values.data(), m, classes,
           &settings);
  cpu.accumulate(r.values.data(), 2, m, r.totals.data());
  return r;
}

// A step's loss pass with the metric accumulation folded in (one launch up to 256 rows) gives the
// gradient and the totals of the two separate calls: the totals bit for bit, on the device.
TEST_F(KernelParity, LossAndAccumulateInOneLaunch) {
  const int classes = 10;
  for (const int m : {1, 64, 256, 257}) {
    std::vector<float> labels(m);
    for (int r = 0; r < m; ++r) labels[r] = float(r % classes);
    const auto out = random_vector(size_t(m) * classes, 17, -4.f, 4.f);
    const LossReference want = cpu_loss_pass(cpu_, out, labels, m, classes, {0.5, 0.25});
    Buffer<float> Out(*device_, out), T(*device_, labels), dOut(*device_, nans(out.size())),
        V(*device_, nans(size_t(m) * 2));
    Buffer<double> fused(*device_, {0.5, 0.25}), apart(*device_, {0.5, 0.25});
    Buffer<MemberSettings> Settings(*device_, {MemberSettings{}});
    device_->loss_and_accumulate(kClassifier, Out.get(), T.get(), dOut.get(), V.get(), m, classes,
                                 fused.get(), Settings.get());
    expect_close(want.d_out, dOut.read(), 1e-6f, "d_out");
    device_->accumulate(V.get(), 2, m, apart.get());  // the rows it wrote, added the separate way
    const std::vector<double> one = fused.read(), two = apart.read();
    EXPECT_EQ(one, two) << m << " rows";
    EXPECT_NEAR(one[0], want.totals[0], 1e-6 * want.totals[0]) << m << " rows";
    EXPECT_NEAR(one[1], want.totals[1], 1e-9 * want.totals[1]) << m << " rows";
  }
}

// The widest row of values (precision's and recall's two counts each, 9 values with the loss) adds
// up in the fused launch (at most kAccumulateThreads rows) and apart as the CPU's sums.
TEST_F(KernelParity, TheWidestRowOfValuesAccumulates) {
  const LossShape shape{
      Loss::binary_crossentropy,
      false,
      3,
      {4, {Metric::precision, Metric::recall, Metric::recall, Metric::precision}}};
  ASSERT_EQ(shape.values(), 9);
  for (const int m : {64, 257}) {
    const auto out = random_vector(size_t(m) * 3, 18, -4.f, 4.f);
    std::vector<float> labels(size_t(m) * 3);
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = float(i % 3 == 0);
    const MemberSettings settings;
    std::vector<float> d_out(out.size()), row(size_t(m) * 9);
    std::vector<double> want(9, 0.0);
    cpu_.loss(shape, out.data(), labels.data(), d_out.data(), row.data(), m, 3, &settings);
    cpu_.accumulate(row.data(), 9, m, want.data());
    Buffer<float> Out(*device_, out), T(*device_, labels), dOut(*device_, nans(out.size())),
        V(*device_, nans(row.size()));
    Buffer<double> totals(*device_, std::vector<double>(9, 0.0));
    Buffer<MemberSettings> Settings(*device_, {settings});
    device_->loss_and_accumulate(shape, Out.get(), T.get(), dOut.get(), V.get(), m, 3, totals.get(),
                                 Settings.get());
    const std::vector<double> got = totals.read();
    for (int v = 1; v < 9; ++v) EXPECT_EQ(got[size_t(v)], want[size_t(v)]) << "value " << v;
    EXPECT_NEAR(got[0], want[0], 1e-6 * want[0]) << m << " rows";
    // [loss, precision's tp and predicted, recall's tp and actual, recall's, precision's]
    EXPECT_EQ(want[1], want[7]);
    EXPECT_EQ(want[2], want[8]);
    EXPECT_EQ(want[1], want[3]) << "the true positives are one count";
  }
}

// The loss pass reading the batch's targets from the data set by row index (where the device fuses
// the gather) equals the CPU's on the gathered targets, in one launch (64 rows) and in two (300).
TEST_F(KernelParity, LossReadsTheTargetsByRowIndex) {
  if (!device_->fuses_gather()) GTEST_SKIP() << "this device's loss pass reads gathered targets";
  const int classes = 10, data_rows = 400;
  std::vector<float> labels(data_rows);
  for (int r = 0; r < data_rows; ++r) labels[r] = float((r * 3) % classes);
  for (const int m : {64, 300}) {
    std::vector<int> rows(m);
    std::vector<float> gathered(m);
    for (int r = 0; r < m; ++r) gathered[r] = labels[rows[r] = (r * 11 + 5) % data_rows];
    const auto out = random_vector(size_t(m) * classes, 19, -4.f, 4.f);
    const LossReference want = cpu_loss_pass(cpu_, out, gathered, m, classes, {0, 0});
    Buffer<float> Out(*device_, out), T(*device_, labels), dOut(*device_, nans(out.size())),
        V(*device_, nans(size_t(m) * 2));
    Buffer<int> Rows(*device_, rows);
    Buffer<double> totals(*device_, {0, 0});
    Buffer<MemberSettings> Settings(*device_, {MemberSettings{}});
    device_->loss_and_accumulate(kClassifier, Out.get(), T.get(), dOut.get(), V.get(), m, classes,
                                 totals.get(), Settings.get(), Rows.get());
    expect_close(want.d_out, dOut.read(), 1e-6f, "d_out");
    expect_close(want.values, V.read(), 1e-6f, "row values");
    const std::vector<double> got = totals.read();
    EXPECT_NEAR(got[0], want.totals[0], 1e-6 * want.totals[0]) << m << " rows";
    EXPECT_EQ(got[1], want.totals[1]) << m << " rows";  // accuracies are counts
  }
}

TEST_F(KernelParity, ShuffleAndGather) {
  for (int n : {1, 7, 1000, 4097}) {
    std::vector<int> want(n), unset(n, -1);
    MemberSettings settings;
    settings.seed = 42;
    Buffer<MemberSettings> Settings(*device_, {settings});
    cpu_.shuffle(want.data(), n, &settings, 3);
    Buffer<int> order(*device_, unset);
    device_->shuffle(order.get(), n, Settings.get(), 3);
    EXPECT_EQ(want, order.read()) << "n " << n;  // the same permutation, exactly
  }
  const int rows = 50, cols = 300, m = 17;
  const auto src = random_vector(size_t(rows) * cols, 17);
  std::vector<int> order(m);
  for (int r = 0; r < m; ++r) order[r] = (r * 7 + 3) % rows;
  std::vector<float> want(size_t(m) * cols);
  cpu_.gather(src.data(), cols, order.data(), m, want.data());
  Buffer<float> S(*device_, src), D(*device_, nans(want.size()));
  Buffer<int> O(*device_, order);
  device_->gather(S.get(), cols, O.get(), m, D.get());
  expect_close(want, D.read(), 0.f, "gathered rows");
}

}  // namespace
}  // namespace mf::test
