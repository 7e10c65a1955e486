// Gradient checks on CpuBackend.
//
// References:
//  * a double-precision forward pass and loss written here from Keras's formulas
//    (mse = mean over rows of the mean over outputs of (y-t)^2; mae of |y-t|; huber of
//    0.5 e^2 within delta, delta (|e| - 0.5 delta) past it; log_cosh of log cosh(y-t);
//    binary cross-entropy -t log p - (1-t) log(1-p), also averaged over outputs;
//    categorical cross-entropy -sum t log softmax(z); sparse categorical cross-entropy
//    -log softmax(z)[label]; label smoothing t (1-s) + s/2 or t (1-s) + s/classes; the
//    activations of keras.activations), differentiated by central differences in
//    double with h = 1e-5: truncation ~h^2 = 1e-10 and round-off ~1e-16/h = 1e-11, so
//    the reference gradient is exact to far below float precision and the model's
//    float32 gradient must match it to 1e-3 relative (+1e-5 absolute);
//  * central differences through the model itself (set_params + evaluate_batch, all
//    float32): with h = 1e-2 the truncation error is ~h^2/6 * |L'''| ~ 1e-5 and the
//    float round-off of an O(1) loss is ~6e-8/h ~ 1e-5 per difference, so 2e-2
//    relative (+2e-3 absolute, for gradients near 0) is loose enough to never flake
//    and tight enough to catch any wrong factor (a missing 1/outputs, 2, or sign);
//  * naive loops in double for the backend's dense products.
// Parameters whose perturbation flips the sign of a kink (a relu, leaky relu or selu
// pre-activation, mae's error), where finite differences are meaningless, are skipped; the
// reference detects it.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.h"
#include "nn/model.h"
#include "runtime/rng.h"
#include "test_support.h"

namespace mf {
namespace {

constexpr int kRows = 6;  // rows of the checked batch
// the spec's batch size: a partial batch, so the loss must scale by rows, not 8
constexpr int kBatch = 8;
constexpr int kInput = 5;

ModelSpec make_spec(std::vector<LayerSpec> layers, Loss loss) {
  ModelSpec spec = test::mlp(kInput, std::move(layers), loss, "gradcheck");
  spec.fit.batch_size = kBatch;
  spec.seed = 7;
  return spec;
}

// ---- The double-precision reference ------------------------------------------------

double act(Activation a, double z) {
  const double selu_alpha = 1.6732632423543772848170429916717,
               selu_scale = 1.0507009873554804934193349852946;
  switch (a) {
    case Activation::relu:
      return z > 0 ? z : 0;
    case Activation::sigmoid:
      return 1 / (1 + std::exp(-z));
    case Activation::tanh:
      return std::tanh(z);
    case Activation::gelu:
      return 0.5 * z * (1 + std::erf(z / std::sqrt(2.0)));
    case Activation::swish:
      return z / (1 + std::exp(-z));
    case Activation::elu:
      return z > 0 ? z : std::expm1(z);
    case Activation::selu:
      return selu_scale * (z > 0 ? z : selu_alpha * std::expm1(z));
    case Activation::softplus:
      return std::log1p(std::exp(z));
    case Activation::leaky_relu:
      return z > 0 ? z : 0.2 * z;
    case Activation::mish:
      return z * std::tanh(std::log1p(std::exp(z)));
    case Activation::softsign:
      return z / (1 + std::abs(z));
    default:
      return z;  // linear; softmax is handled by the loss
  }
}
bool has_kink(Activation a) {
  return a == Activation::relu || a == Activation::leaky_relu || a == Activation::selu;
}

struct RefResult {
  double loss = 0;
  // the side of every kink, in order: a kinked activation's z > 0, mae's y > t
  std::vector<bool> kink_signs;
};

RefResult reference(const ModelSpec& spec, const std::vector<double>& p,
                    const std::vector<float>& X, const std::vector<float>& T, int m) {
  RefResult r;
  for (int row = 0; row < m; ++row) {
    std::vector<double> a(X.begin() + row * spec.input, X.begin() + (row + 1) * spec.input);
    size_t at = 0;
    int in = spec.input;
    std::vector<double> z;
    for (const LayerSpec& l : spec.layers) {
      z.assign(l.units, 0.0);
      for (int j = 0; j < l.units; ++j) {
        double s = p[at + size_t(in) * l.units + j];  // bias
        for (int i = 0; i < in; ++i) s += a[i] * p[at + size_t(i) * l.units + j];
        z[j] = s;
      }
      at += size_t(in + 1) * l.units;
      a.resize(l.units);
      for (int j = 0; j < l.units; ++j) {
        if (has_kink(l.activation)) r.kink_signs.push_back(z[j] > 0);
        a[j] = act(l.activation, z[j]);
      }
      in = l.units;
    }
    const int n = spec.outputs();
    const double s = spec.loss.label_smoothing;
    double row_loss = 0;
    if (spec.loss.kind == Loss::sparse_categorical_crossentropy ||
        spec.loss.kind == Loss::categorical_crossentropy) {
      double sum = 0;
      for (double v : z) sum += std::exp(v);
      for (int j = 0; j < n; ++j) {
        const double t = spec.loss.kind == Loss::categorical_crossentropy
                             ? T[row * n + j]
                             : double(int(T[row]) == j);
        row_loss -= (t * (1 - s) + s / n) * (z[j] - std::log(sum));
      }
    } else {
      for (int j = 0; j < n; ++j) {
        const double t = T[row * n + j], e = a[j] - t, delta = spec.loss.delta;
        switch (spec.loss.kind) {
          case Loss::mse:
            row_loss += e * e;
            break;
          case Loss::mean_absolute_error:
            row_loss += std::abs(e), r.kink_signs.push_back(e > 0);
            break;
          case Loss::huber:
            row_loss += std::abs(e) <= delta ? 0.5 * e * e : delta * (std::abs(e) - 0.5 * delta);
            break;
          case Loss::log_cosh:
            row_loss += std::log(std::cosh(e));
            break;
          case Loss::mean_squared_logarithmic_error: {
            const double d = std::log(std::max(a[j], 1e-7) + 1) - std::log(std::max(t, 1e-7) + 1);
            row_loss += d * d;
            break;
          }
          default: {  // binary cross-entropy on p = sigmoid(z), of the smoothed target
            const double q = 1 / (1 + std::exp(-z[j])), ts = t * (1 - s) + 0.5 * s;
            row_loss += -ts * std::log(q) - (1 - ts) * std::log(1 - q);
          }
        }
      }
      row_loss /= n;
    }
    r.loss += row_loss;
  }
  r.loss /= m;
  return r;
}

// ---- The check ----------------------------------------------------------------------

struct Problem {
  ModelSpec spec;
  std::vector<float> X, T;
};

Problem make_problem(const ModelSpec& spec, uint64_t seed) {
  Problem p{spec, {}, {}};
  Rng rng(seed);
  p.X.resize(size_t(kRows) * kInput);
  for (float& x : p.X) x = rng.uniform(-1.f, 1.f);
  const int n = spec.outputs();
  if (spec.loss.kind == Loss::sparse_categorical_crossentropy) {
    for (int r = 0; r < kRows; ++r) p.T.push_back(float(rng.below(uint32_t(n))));
  } else if (spec.loss.kind == Loss::categorical_crossentropy) {  // one-hot rows
    for (int r = 0; r < kRows; ++r) {
      const uint32_t label = rng.below(uint32_t(n));
      for (int j = 0; j < n; ++j) p.T.push_back(float(uint32_t(j) == label));
    }
  } else {
    const bool sigmoid_out = spec.output_activation() == Activation::sigmoid;
    for (int i = 0; i < kRows * n; ++i) {
      if (spec.loss.kind == Loss::binary_crossentropy) p.T.push_back(float(rng.below(2)));
      // reachable targets in (0, 1)
      else if (sigmoid_out)
        p.T.push_back(rng.uniform());
      else
        p.T.push_back(rng.uniform(-1.5f, 1.5f));
    }
  }
  return p;
}

void check_gradients(const ModelSpec& spec, uint64_t data_seed = 11) {
  SCOPED_TRACE("loss " + std::string(to_string(spec.loss.kind)) + ", hidden " +
               to_string(spec.layers[0].activation) + ", output " +
               to_string(spec.output_activation()));
  CpuBackend cpu;
  Model model(spec, cpu);
  const Problem pb = make_problem(spec, data_seed);

  const std::vector<float> params = model.get_params();
  ASSERT_EQ(int64_t(params.size()), model.param_count());
  model.compute_gradients(pb.X.data(), pb.T.data(), kRows);
  const std::vector<float> grads = model.get_gradients();

  const std::vector<double> p64(params.begin(), params.end());
  const RefResult base = reference(spec, p64, pb.X, pb.T, kRows);

  // The model's mean batch loss, through its own forward pass.
  auto model_loss = [&](const std::vector<float>& p) {
    model.set_params(p);
    model.reset_totals();
    model.evaluate_batch(pb.X.data(), pb.T.data(), kRows);
    return model.read_totals().front()[0] / kRows;
  };
  EXPECT_NEAR(model_loss(params), base.loss, 1e-5 * std::max(1.0, base.loss))
      << "forward loss vs reference";

  int checked = 0, skipped = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    // (1) against the double reference, h = 1e-5.
    {
      const double h = 1e-5;
      std::vector<double> plus = p64, minus = p64;
      plus[i] += h;
      minus[i] -= h;
      const RefResult rp = reference(spec, plus, pb.X, pb.T, kRows),
                      rm = reference(spec, minus, pb.X, pb.T, kRows);
      if (rp.kink_signs == base.kink_signs && rm.kink_signs == base.kink_signs) {
        const double fd = (rp.loss - rm.loss) / (2 * h);
        EXPECT_NEAR(grads[i], fd, 1e-5 + 1e-3 * std::abs(fd))
            << "param " << i << " vs double reference";
      }
    }
    // (2) through the model in float, h = 1e-2.
    {
      const float h = 1e-2f;
      std::vector<float> plus = params, minus = params;
      plus[i] += h;
      minus[i] -= h;
      const std::vector<double> p64p(plus.begin(), plus.end()), p64m(minus.begin(), minus.end());
      if (reference(spec, p64p, pb.X, pb.T, kRows).kink_signs != base.kink_signs ||
          reference(spec, p64m, pb.X, pb.T, kRows).kink_signs != base.kink_signs) {
        ++skipped;
        continue;
      }
      const double fd =
          (model_loss(plus) - model_loss(minus)) / (double(plus[i]) - double(minus[i]));
      EXPECT_NEAR(grads[i], fd, 2e-3 + 2e-2 * std::abs(fd))
          << "param " << i << " vs model finite difference";
      ++checked;
    }
  }
  // Kinks are rare: most parameters must have been checked.
  EXPECT_GE(checked, int(params.size()) * 3 / 4) << skipped << " skipped";
  // A gradient that is all zeros would pass many checks trivially.
  double norm = 0;
  for (float g : grads) norm += double(g) * g;
  EXPECT_GT(norm, 1e-6);
}

// (a) every hidden activation, through two hidden layers (so the backward pass
// chains activation_backward twice), with a linear mse output.
class HiddenActivation : public testing::TestWithParam<Activation> {};

TEST_P(HiddenActivation, MatchesFiniteDifferences) {
  const Activation a = GetParam();
  check_gradients(make_spec({{4, a}, {3, a}, {2, Activation::linear}}, Loss::mse));
}

INSTANTIATE_TEST_SUITE_P(All, HiddenActivation,
                         testing::Values(Activation::linear, Activation::relu, Activation::sigmoid,
                                         Activation::tanh, Activation::gelu, Activation::swish,
                                         Activation::elu, Activation::selu, Activation::softplus,
                                         Activation::leaky_relu, Activation::mish,
                                         Activation::softsign),
                         [](const testing::TestParamInfo<Activation>& info) {
                           return to_string(info.param);
                         });

// (b) every loss with the output activations it allows.
TEST(LossGradient, MseLinearOutput) {
  check_gradients(make_spec({{4, Activation::tanh}, {3, Activation::linear}}, Loss::mse));
}

TEST(LossGradient, MseSigmoidOutput) {
  check_gradients(make_spec({{4, Activation::tanh}, {3, Activation::sigmoid}}, Loss::mse));
}

TEST(LossGradient, MseTanhOutputWithReluHidden) {
  check_gradients(make_spec({{4, Activation::relu}, {3, Activation::tanh}}, Loss::mse));
}

TEST(LossGradient, BinaryCrossentropyOneOutput) {
  check_gradients(
      make_spec({{4, Activation::tanh}, {1, Activation::sigmoid}}, Loss::binary_crossentropy));
}

TEST(LossGradient, BinaryCrossentropyThreeOutputs) {  // Keras averages over the outputs of a row
  check_gradients(
      make_spec({{4, Activation::relu}, {3, Activation::sigmoid}}, Loss::binary_crossentropy));
}

TEST(LossGradient, SparseCategoricalCrossentropy) {
  check_gradients(make_spec({{4, Activation::tanh}, {3, Activation::softmax}},
                            Loss::sparse_categorical_crossentropy));
}

TEST(LossGradient, SparseCategoricalCrossentropyReluHidden) {
  check_gradients(make_spec({{4, Activation::relu}, {3, Activation::softmax}},
                            Loss::sparse_categorical_crossentropy));
}

TEST(LossGradient, CategoricalCrossentropyOfOneHotRows) {
  ModelSpec spec =
      make_spec({{4, Activation::tanh}, {3, Activation::softmax}}, Loss::categorical_crossentropy);
  spec.targets = 3;
  check_gradients(spec);
}

TEST(LossGradient, LabelSmoothing) {
  ModelSpec categorical =
      make_spec({{4, Activation::tanh}, {3, Activation::softmax}}, Loss::categorical_crossentropy);
  categorical.targets = 3, categorical.loss.label_smoothing = 0.2;
  check_gradients(categorical);
  ModelSpec binary =
      make_spec({{4, Activation::tanh}, {2, Activation::sigmoid}}, Loss::binary_crossentropy);
  binary.loss.label_smoothing = 0.3;
  check_gradients(binary);
}

TEST(LossGradient, FromLogitsIsTheSameLossOfALinearOutput) {
  ModelSpec spec =
      make_spec({{4, Activation::tanh}, {2, Activation::linear}}, Loss::binary_crossentropy);
  spec.loss.from_logits = true;
  check_gradients(spec);
}

TEST(LossGradient, RegressionLosses) {
  check_gradients(
      make_spec({{4, Activation::tanh}, {3, Activation::linear}}, Loss::mean_absolute_error));
  check_gradients(make_spec({{4, Activation::tanh}, {3, Activation::linear}}, Loss::log_cosh));
  // Positive outputs, away from the epsilon below which msle's gradient is 0.
  check_gradients(make_spec({{4, Activation::tanh}, {3, Activation::softplus}},
                            Loss::mean_squared_logarithmic_error));
  ModelSpec huber = make_spec({{4, Activation::tanh}, {3, Activation::linear}}, Loss::huber);
  huber.loss.delta = 0.5;  // the targets in [-1.5, 1.5] put errors on both sides of it
  check_gradients(huber);
}

TEST(LossGradient, SingleLayerModel) {  // no hidden layer: the first layer is also the output
  check_gradients(make_spec({{3, Activation::softmax}}, Loss::sparse_categorical_crossentropy));
}

// The gradient of a batch does not depend on earlier batches (the buffers are overwritten, not
// accumulated).
TEST(LossGradient, RepeatedComputationIsIdentical) {
  const ModelSpec spec = make_spec({{4, Activation::relu}, {3, Activation::softmax}},
                                   Loss::sparse_categorical_crossentropy);
  CpuBackend cpu;
  Model model(spec, cpu);
  const Problem a = make_problem(spec, 1), b = make_problem(spec, 2);
  model.compute_gradients(a.X.data(), a.T.data(), kRows);
  const std::vector<float> first = model.get_gradients();
  model.compute_gradients(b.X.data(), b.T.data(), kRows);
  EXPECT_NE(model.get_gradients(), first);
  model.compute_gradients(a.X.data(), a.T.data(), kRows);
  EXPECT_EQ(model.get_gradients(), first);
}

// ---- The backend's products against naive loops ------------------------------------

constexpr Activation kElementwise[] = {
    Activation::linear,   Activation::relu,       Activation::sigmoid, Activation::tanh,
    Activation::gelu,     Activation::swish,      Activation::elu,     Activation::selu,
    Activation::softplus, Activation::leaky_relu, Activation::mish,    Activation::softsign};

std::vector<float> random_matrix(Rng& rng, int rows, int cols) {
  std::vector<float> v(size_t(rows) * cols);
  for (float& x : v) x = rng.uniform(-1.f, 1.f);
  return v;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i])))
        << what << " element " << i;
}

struct Shape {
  int m, k, n;
};

class DenseOps : public testing::TestWithParam<Shape> {};

TEST_P(DenseOps, ForwardMatchesNaiveLoop) {
  const auto [m, k, n] = GetParam();
  Rng rng(3);
  const auto X = random_matrix(rng, m, k), W = random_matrix(rng, k, n),
             b = random_matrix(rng, 1, n);
  CpuBackend cpu;
  for (Activation a : kElementwise) {
    std::vector<float> Y(size_t(m) * n);
    cpu.dense_forward(X.data(), W.data(), b.data(), Y.data(), nullptr, m, k, n, a);
    std::vector<double> want(Y.size());
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) {
        double s = b[c];
        for (int i = 0; i < k; ++i) s += double(X[r * k + i]) * W[i * n + c];
        want[r * n + c] = act(a, s);
      }
    expect_close(Y, want, 1e-5, to_string(a));
  }
}

TEST_P(DenseOps, BackwardInputMatchesNaiveLoop) {
  const auto [m, k, n] = GetParam();
  Rng rng(4);
  const auto dZ = random_matrix(rng, m, n), W = random_matrix(rng, k, n);
  CpuBackend cpu;
  // garbage: the product must overwrite, not accumulate
  std::vector<float> dX(size_t(m) * k, 99.f);
  cpu.dense_backward_input(dZ.data(), W.data(), dX.data(), m, k, n);
  std::vector<double> want(dX.size());
  for (int r = 0; r < m; ++r)
    for (int i = 0; i < k; ++i) {
      double s = 0;
      for (int c = 0; c < n; ++c) s += double(dZ[r * n + c]) * W[i * n + c];
      want[r * k + i] = s;
    }
  expect_close(dX, want, 1e-5, "dX");
}

TEST_P(DenseOps, BackwardParamsMatchesNaiveLoop) {
  const auto [m, k, n] = GetParam();
  Rng rng(5);
  const auto X = random_matrix(rng, m, k), dZ = random_matrix(rng, m, n);
  CpuBackend cpu;
  std::vector<float> dW(size_t(k) * n, 99.f), db(n, 99.f);
  cpu.dense_backward_params(X.data(), dZ.data(), dW.data(), db.data(), m, k, n);
  std::vector<double> want_w(dW.size()), want_b(n);
  for (int i = 0; i < k; ++i)
    for (int c = 0; c < n; ++c) {
      double s = 0;
      for (int r = 0; r < m; ++r) s += double(X[r * k + i]) * dZ[r * n + c];
      want_w[i * n + c] = s;
    }
  for (int c = 0; c < n; ++c)
    for (int r = 0; r < m; ++r) want_b[c] += dZ[r * n + c];
  expect_close(dW, want_w, 1e-5, "dW");
  expect_close(db, want_b, 1e-5, "db");
}

INSTANTIATE_TEST_SUITE_P(Shapes, DenseOps,
                         testing::Values(Shape{1, 1, 1}, Shape{7, 5, 3}, Shape{33, 17, 9},
                                         Shape{64, 100, 10}),
                         [](const testing::TestParamInfo<Shape>& info) {
                           return std::to_string(info.param.m) + "x" +
                                  std::to_string(info.param.k) + "x" + std::to_string(info.param.n);
                         });

TEST(ActivationBackward, DerivativeFromOutput) {
  // d act/dz at z, computed from y = act(z) (and z itself, for gelu and swish), against a central
  // difference of the double activation (h = 1e-6: exact to ~1e-10 away from a kink; no z is at
  // one).
  CpuBackend cpu;
  const std::vector<float> z = {-2.f, -0.5f, 0.3f, 1.7f};
  const std::vector<float> dY = {0.5f, -1.f, 2.f, 0.25f};
  for (Activation a : kElementwise) {
    std::vector<float> Y(z.size()), dZ(z.size());
    for (size_t i = 0; i < z.size(); ++i) Y[i] = float(act(a, z[i]));
    const Through own{a, Y.data(), z.data()};
    cpu.activation_backward(dY.data(), dZ.data(), int64_t(z.size()), own);
    std::vector<double> want(z.size());
    for (size_t i = 0; i < z.size(); ++i)
      want[i] = dY[i] * (act(a, z[i] + 1e-6) - act(a, z[i] - 1e-6)) / 2e-6;
    expect_close(dZ, want, 1e-5, to_string(a));
    // In place (dZ aliasing dY), as the model calls it.
    std::vector<float> inout = dY;
    cpu.activation_backward(inout.data(), inout.data(), int64_t(z.size()), own);
    EXPECT_EQ(inout, dZ) << to_string(a);
  }
}

}  // namespace
}  // namespace mf
