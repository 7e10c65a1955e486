// The layers beside Dense (Dropout, BatchNormalization, Activation) and the regularizers, through
// the whole model on CpuBackend, against a double-precision reference written here from Keras 3's
// definitions:
//  * Dropout in training: y = x / (1 - rate) where kept, 0 where dropped, the mask being
//    multifit's counter hash (kernels/layer_math.h: dropout_key, dropout_uniform), which the
//    reference calls;
//  * BatchNormalization in training: each column's batch mean and biased variance (tf.nn.moments),
//    y = (x - mean) / sqrt(var + epsilon) * gamma + beta; its moving statistics then
//    moving * momentum + batch * (1 - momentum); in inference the moving ones in place of the
//    batch's;
//  * an activity regularizer adds (l1 sum |y| + l2 sum y^2) / rows to the loss (Keras divides it by
//    the batch's rows); a weight regularizer adds l1 sum |w| + l2 sum w^2, and its gradient
//    l1 sign(w) + 2 l2 w joins the optimizer step's (keras.regularizers.L1L2);
//  * mse, the mean over rows of the mean over outputs of (y - t)^2.
// The model's training loss (compute_gradients' totals) must match the reference's to 1e-5
// relative, and its gradients the reference's central differences (double, h = 1e-5: exact to far
// below float precision, as in test_gradients.cpp) to 1e-3 relative + 1e-5. Activations are
// smooth (tanh, gelu) so that no difference straddles a kink; l1's kink at 0 is detected and
// skipped.
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

constexpr int kRows = 6, kInput = 4;

LayerSpec dropout(double rate) {
  LayerSpec l;
  l.kind = LayerKind::dropout, l.rate = rate;
  return l;
}
LayerSpec batch_norm(double momentum = 0.9, bool center = true, bool scale = true) {
  LayerSpec l;
  l.kind = LayerKind::batch_normalization, l.momentum = momentum, l.epsilon = 1e-3,
  l.center = center, l.scale = scale;
  return l;
}
LayerSpec activation(Activation a) {
  LayerSpec l(0, a);
  l.kind = LayerKind::activation;
  return l;
}

ModelSpec make_spec(std::vector<LayerSpec> layers) {
  ModelSpec spec = test::mlp(kInput, std::move(layers), Loss::mse, "layers");
  spec.fit.batch_size = 8;  // a partial batch of kRows
  spec.seed = 5;
  return spec;
}

double act(Activation a, double z) {
  switch (a) {
    case Activation::tanh:
      return std::tanh(z);
    case Activation::gelu:
      return 0.5 * z * (1 + std::erf(z / std::sqrt(2.0)));
    case Activation::linear:
      return z;
    default:
      ADD_FAILURE() << "the reference has smooth activations only";
      return z;
  }
}

struct Reference {
  double loss = 0;
  std::vector<bool> kink_signs;  // y > 0 of every output an l1 activity regularizer reads
  std::vector<std::vector<double>> means, variances;  // each BatchNormalization's batch statistics
};

// The model's training loss of X(kRows, kInput), T(kRows, outputs) at parameters p (the model's
// flat order: per Dense W(in, out) and b, per BatchNormalization gamma and beta), or in inference
// with each BatchNormalization's moving statistics.
Reference reference(const ModelSpec& spec, const std::vector<double>& p,
                    const std::vector<float>& X, const std::vector<float>& T, bool training = true,
                    const std::vector<std::vector<double>>& moving_means = {},
                    const std::vector<std::vector<double>>& moving_variances = {}) {
  Reference r;
  std::vector<std::vector<double>> a(kRows);  // a[row]: the current layer's output
  for (int row = 0; row < kRows; ++row)
    a[row].assign(X.begin() + row * kInput, X.begin() + (row + 1) * kInput);
  size_t at = 0;
  int width = kInput, norms = 0;
  for (size_t li = 0; li < spec.layers.size(); ++li) {
    const LayerSpec& l = spec.layers[li];
    if (l.kind == LayerKind::dense) {
      for (auto& x : a) {
        std::vector<double> z(l.units);
        for (int j = 0; j < l.units; ++j) {
          double s = l.use_bias ? p[at + size_t(width) * l.units + j] : 0;
          for (int i = 0; i < width; ++i) s += x[i] * p[at + size_t(i) * l.units + j];
          z[j] = act(l.activation, s);
        }
        x = z;
      }
      for (size_t w = 0; w < size_t(width) * l.units; ++w)
        r.loss += l.kernel_regularizer.l1 * std::abs(p[at + w]) +
                  l.kernel_regularizer.l2 * p[at + w] * p[at + w];
      at += size_t(width) * l.units;
      if (l.use_bias) {
        for (int j = 0; j < l.units; ++j)
          r.loss += l.bias_regularizer.l1 * std::abs(p[at + j]) +
                    l.bias_regularizer.l2 * p[at + j] * p[at + j];
        at += l.units;
      }
      width = l.units;
      for (const auto& x : a)
        for (double y : x) {
          r.loss +=
              (l.activity_regularizer.l1 * std::abs(y) + l.activity_regularizer.l2 * y * y) / kRows;
          if (l.activity_regularizer.l1 != 0) r.kink_signs.push_back(y > 0);
        }
    } else if (l.kind == LayerKind::dropout && training) {
      for (int row = 0; row < kRows; ++row)
        for (int j = 0; j < width; ++j)
          a[row][j] = dropout_uniform(dropout_key(spec.seed, int(li), 0),
                                      int64_t(row) * width + j) >= float(l.rate)
                          ? a[row][j] / (1 - l.rate)
                          : 0;
    } else if (l.kind == LayerKind::batch_normalization) {
      std::vector<double> mean(width, 0), variance(width, 0);
      for (const auto& x : a)
        for (int j = 0; j < width; ++j) mean[j] += x[j] / kRows;
      for (const auto& x : a)
        for (int j = 0; j < width; ++j) variance[j] += (x[j] - mean[j]) * (x[j] - mean[j]) / kRows;
      r.means.push_back(mean), r.variances.push_back(variance);
      if (!training) mean = moving_means[size_t(norms)], variance = moving_variances[size_t(norms)];
      const size_t gamma = at, beta = at + (l.scale ? width : 0);
      for (auto& x : a)
        for (int j = 0; j < width; ++j)
          x[j] =
              (x[j] - mean[j]) / std::sqrt(variance[j] + l.epsilon) * (l.scale ? p[gamma + j] : 1) +
              (l.center ? p[beta + j] : 0);
      at += size_t(width) * (int(l.scale) + int(l.center));
      ++norms;
    } else if (l.kind == LayerKind::activation) {
      for (auto& x : a)
        for (double& y : x) y = act(l.activation, y);
    }
  }
  for (int row = 0; row < kRows; ++row) {
    double s = 0;
    for (int j = 0; j < width; ++j)
      s += (a[row][j] - T[row * width + j]) * (a[row][j] - T[row * width + j]);
    r.loss += s / width / kRows;
  }
  return r;
}

// The weight regularizers' part of the reference: compute_gradients leaves it to the optimizer
// step.
ModelSpec without_weight_regularizers(ModelSpec spec) {
  for (LayerSpec& l : spec.layers) l.kernel_regularizer = l.bias_regularizer = {};
  return spec;
}

struct Problem {
  std::vector<float> X, T;
};
Problem make_problem(const ModelSpec& spec, uint64_t seed = 3) {
  Problem pb;
  Rng rng(seed);
  for (int i = 0; i < kRows * kInput; ++i) pb.X.push_back(rng.uniform(-1.f, 1.f));
  for (int i = 0; i < kRows * spec.outputs(); ++i) pb.T.push_back(rng.uniform(-1.f, 1.f));
  return pb;
}

double training_loss(Model& model, const Problem& pb) {
  model.reset_totals();
  model.compute_gradients(pb.X.data(), pb.T.data(), kRows);
  return model.read_totals().front()[0] / kRows;
}

// The params the model starts from, with the BatchNormalizations' gamma and beta moved off 1 and 0
// so that a swapped gamma and beta shows.
std::vector<float> perturbed_params(Model& model) {
  std::vector<float> p = model.get_params();
  Rng rng(9);
  for (float& x : p) x += rng.uniform(-0.3f, 0.3f);
  model.set_params(p);
  return p;
}

void check_gradients(const ModelSpec& spec) {
  CpuBackend cpu;
  Model model(spec, cpu);
  const Problem pb = make_problem(spec);
  const std::vector<float> params = perturbed_params(model);
  const std::vector<double> p64(params.begin(), params.end());
  const ModelSpec data_spec = without_weight_regularizers(spec);
  const Reference base = reference(data_spec, p64, pb.X, pb.T);

  EXPECT_NEAR(training_loss(model, pb), base.loss, 1e-5 * std::max(1.0, base.loss))
      << "training loss";
  const std::vector<float> grads = model.get_gradients();
  int checked = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const double h = 1e-5;
    std::vector<double> plus = p64, minus = p64;
    plus[i] += h, minus[i] -= h;
    const Reference rp = reference(data_spec, plus, pb.X, pb.T),
                    rm = reference(data_spec, minus, pb.X, pb.T);
    if (rp.kink_signs != base.kink_signs || rm.kink_signs != base.kink_signs) continue;
    const double fd = (rp.loss - rm.loss) / (2 * h);
    EXPECT_NEAR(grads[i], fd, 1e-5 + 1e-3 * std::abs(fd))
        << "parameter " << i << " of " << params.size();
    ++checked;
  }
  EXPECT_GE(checked, int(params.size()) * 3 / 4);
}

TEST(LayerGradients, Dropout) {
  // Below a Dense whose tanh the dropout's backward takes its gradient through, and at the output.
  check_gradients(
      make_spec({{5, Activation::tanh}, dropout(0.4), {3, Activation::tanh}, dropout(0.25), {2}}));
}

// Keras's usual Dense(linear), BN, Activation
TEST(LayerGradients, BatchNormalizationBeforeTheActivation) {
  check_gradients(make_spec({{5}, batch_norm(), activation(Activation::tanh), {2}}));
}

TEST(LayerGradients, BatchNormalizationAfterTheActivation) {
  check_gradients(
      make_spec({{5, Activation::gelu}, batch_norm(), {3, Activation::tanh}, batch_norm(), {2}}));
}

TEST(LayerGradients, BatchNormalizationWithoutCenterOrScale) {
  check_gradients(make_spec({{5},
                             batch_norm(0.9, false, true),
                             {4, Activation::tanh},
                             batch_norm(0.9, true, false),
                             {3},
                             batch_norm(0.9, false, false),
                             {2}}));
}

TEST(LayerGradients, ActivityRegularizers) {
  ModelSpec spec = make_spec({{5, Activation::tanh}, {4, Activation::gelu}, {2}});
  spec.layers[0].activity_regularizer = {0, 0.05f};
  spec.layers[1].activity_regularizer = {0.03f, 0.01f};
  spec.layers[2].activity_regularizer = {0.02f, 0};  // on the output
  check_gradients(spec);
}

TEST(LayerGradients, EveryLayerAtOnce) {
  ModelSpec spec = make_spec({{6},
                              batch_norm(),
                              activation(Activation::gelu),
                              dropout(0.3),
                              {4, Activation::tanh},
                              dropout(0.2),
                              batch_norm(0.8),
                              {2}});
  spec.layers[4].activity_regularizer = {0, 0.02f};
  // the optimizer step's: not in these gradients
  spec.layers[0].kernel_regularizer = {0.01f, 0.01f};
  check_gradients(spec);
}

// ---- BatchNormalization's moving statistics and inference ---------------------------------------

TEST(BatchNormalization, MovingStatisticsFollowKerasAndInferenceReadsThem) {
  const ModelSpec spec =
      make_spec({{5}, batch_norm(0.9), activation(Activation::tanh), {3}, batch_norm(0.7), {2}});
  CpuBackend cpu;
  Model model(spec, cpu);
  const std::vector<float> params = perturbed_params(model);
  const std::vector<double> p64(params.begin(), params.end());
  std::vector<std::vector<double>> mean = {std::vector<double>(5, 0.0),
                                           std::vector<double>(3, 0.0)};
  std::vector<std::vector<double>> variance = {std::vector<double>(5, 1.0),
                                               std::vector<double>(3, 1.0)};
  const double momentum[] = {0.9, 0.7};
  for (uint64_t batch = 0; batch < 3;
       ++batch) {  // three training forwards: the moving statistics fold each in
    const Problem pb = make_problem(spec, 20 + batch);
    training_loss(model, pb);
    const Reference r = reference(spec, p64, pb.X, pb.T);
    for (size_t b = 0; b < 2; ++b)
      for (size_t j = 0; j < mean[b].size(); ++j) {
        mean[b][j] = mean[b][j] * momentum[b] + r.means[b][j] * (1 - momentum[b]);
        variance[b][j] = variance[b][j] * momentum[b] + r.variances[b][j] * (1 - momentum[b]);
      }
  }
  // get_weights: W0 b0 | gamma beta moving_mean moving_variance | W1 b1 | gamma beta mm mv | W2 b2.
  const std::vector<float> weights = model.get_weights();
  ASSERT_EQ(int64_t(weights.size()), Model::weight_count(spec));
  const size_t at[] = {size_t(kInput) * 5 + 5 + 2 * 5,
                       size_t(kInput) * 5 + 5 + 4 * 5 + 5 * 3 + 3 + 2 * 3};
  const size_t widths[] = {5, 3};
  for (size_t b = 0; b < 2; ++b)
    for (size_t j = 0; j < widths[b]; ++j) {
      EXPECT_NEAR(weights[at[b] + j], mean[b][j], 1e-6)
          << "moving mean of normalization " << b << ", column " << j;
      EXPECT_NEAR(weights[at[b] + widths[b] + j], variance[b][j], 1e-6)
          << "moving variance " << b << ", " << j;
    }
  // Inference normalizes with the moving statistics, and changes none of them.
  const Problem pb = make_problem(spec, 30);
  model.reset_totals();
  model.evaluate_batch(pb.X.data(), pb.T.data(), kRows);
  const double loss = model.read_totals().front()[0] / kRows;
  EXPECT_NEAR(loss, reference(spec, p64, pb.X, pb.T, false, mean, variance).loss, 1e-5);
  EXPECT_EQ(model.get_weights(), weights);
}

// ---- Dropout's mask -----------------------------------------------------------------------------

TEST(DropoutMask, DropsTheRateAndScalesWhatItKeepsTheSameInBackward) {
  constexpr int m = 128, n = 64;  // 8192 draws
  CpuBackend cpu;
  const std::vector<float> ones(size_t(m) * n, 1.f);
  std::vector<float> y(ones.size()), dx(ones.size()), again(ones.size());
  MemberSettings member;
  member.seed = 11;
  for (float rate : {0.1f, 0.5f, 0.8f}) {
    SCOPED_TRACE(rate);
    LayerSettings layers[2];
    layers[1].dropout_rate = rate, layers[1].dropout_scale = float(1 / (1 - double(rate)));
    StepState step;
    step.t = 7;
    const Pack pack{1, 0, 0, 0, &step};
    cpu.dropout_forward(ones.data(), y.data(), m, n, 1, &member, layers, pack);
    int dropped = 0;
    for (float v : y) {
      if (v == 0.f)
        ++dropped;
      else
        EXPECT_EQ(v, layers[1].dropout_scale);
    }
    // Binomial(8192, rate): within 5 standard deviations.
    const double expected = rate * double(y.size()), sd = std::sqrt(expected * (1 - rate));
    EXPECT_NEAR(dropped, expected, 5 * sd);
    // Backward finds the same mask (the loss pass has counted the step: its backward reads t - 1).
    step.t = 8;
    const Pack backward{1, 0, 0, 0, &step, true};
    cpu.dropout_backward(ones.data(), dx.data(), m, n, 1, &member, layers, {}, backward);
    EXPECT_EQ(dx, y);
    // Another step, layer or seed draws another mask.
    cpu.dropout_forward(ones.data(), again.data(), m, n, 1, &member, layers, pack);
    EXPECT_NE(again, y) << "step";
    layers[0] = layers[1];
    step.t = 7;
    cpu.dropout_forward(ones.data(), again.data(), m, n, 0, &member, layers, pack);
    EXPECT_NE(again, y) << "layer";
    MemberSettings other = member;
    other.seed = 12;
    cpu.dropout_forward(ones.data(), again.data(), m, n, 1, &other, layers, pack);
    EXPECT_NE(again, y) << "seed";
  }
}

// A training step's backward takes the mask its forward drew (the step's, before the step is
// counted): its SGD update is -lr times compute_gradients' gradient at the same step.
TEST(DropoutMask, ATrainingStepsBackwardTakesItsForwardsMask) {
  ModelSpec spec = make_spec({{5, Activation::tanh}, dropout(0.5), {2}});
  spec.optimizer.kind = OptimizerKind::sgd, spec.optimizer.learning_rate = 0.5f;
  CpuBackend cpu;
  Model model(spec, cpu);
  const Problem pb = make_problem(spec);
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    const std::vector<float> before = model.get_params();
    // does not count the step: the same masks
    model.compute_gradients(pb.X.data(), pb.T.data(), kRows);
    const std::vector<float> g = model.get_gradients();
    model.train_batch(pb.X.data(), pb.T.data(), kRows);
    const std::vector<float> after = model.get_params();
    for (size_t i = 0; i < after.size(); ++i)
      EXPECT_EQ(after[i], before[i] - 0.5f * g[i]) << "parameter " << i;
  }
}

TEST(DropoutMask, InferencePassesTheInputOn) {
  ModelSpec spec = make_spec({{5, Activation::tanh}, dropout(0.5), {2}});
  ModelSpec without = make_spec({{5, Activation::tanh}, {2}});
  CpuBackend cpu;
  Model with_dropout(spec, cpu), plain(without, cpu);
  plain.set_params(with_dropout.get_params());
  const Problem pb = make_problem(spec);
  with_dropout.evaluate_batch(pb.X.data(), pb.T.data(), kRows);
  plain.evaluate_batch(pb.X.data(), pb.T.data(), kRows);
  EXPECT_EQ(with_dropout.read_totals(), plain.read_totals());
}

// ---- Weight regularizers: in the optimizer step and the loss ------------------------------------

TEST(WeightRegularizers, JoinTheStepsGradientAndTheLoss) {
  ModelSpec spec = make_spec({{5, Activation::tanh}, {2}});
  spec.layers[0].kernel_regularizer = {0, 0.05f};
  spec.layers[1].kernel_regularizer = {0.02f, 0};
  spec.layers[1].bias_regularizer = {0.01f, 0.03f};
  spec.optimizer.kind = OptimizerKind::sgd, spec.optimizer.learning_rate = 0.1f;
  CpuBackend cpu;
  Model model(spec, cpu);
  const Problem pb = make_problem(spec);
  const std::vector<float> p = perturbed_params(model);
  model.compute_gradients(pb.X.data(), pb.T.data(), kRows);
  const std::vector<float> g = model.get_gradients();  // the data's gradients only
  model.reset_totals();
  model.train_batch(pb.X.data(), pb.T.data(), kRows);
  // The loss of the step: the data's and every weight's penalty, at the weights before the step.
  const std::vector<double> p64(p.begin(), p.end());
  EXPECT_NEAR(model.read_totals().front()[0] / kRows, reference(spec, p64, pb.X, pb.T).loss, 1e-5);
  // SGD: w - lr (g + l1 sign(w) + 2 l2 w), per tensor's regularizer.
  const std::vector<float> after = model.get_params();
  // where each tensor ends
  const size_t w0 = size_t(kInput) * 5, b0 = w0 + 5, w1 = b0 + 5 * 2, b1 = w1 + 2;
  ASSERT_EQ(after.size(), b1);
  for (size_t i = 0; i < after.size(); ++i) {
    const Regularizer r = i < w0   ? spec.layers[0].kernel_regularizer
                          : i < b0 ? Regularizer{}
                          : i < w1 ? spec.layers[1].kernel_regularizer
                                   : spec.layers[1].bias_regularizer;
    const double sign = p[i] > 0 ? 1 : p[i] < 0 ? -1 : 0;
    const double want = p[i] - 0.1 * (g[i] + r.l1 * sign + 2.0 * r.l2 * p[i]);
    EXPECT_NEAR(after[i], want, 1e-6) << "parameter " << i;
  }
  // Evaluation reports the same penalty beside the data's loss.
  model.set_params(p);
  model.reset_totals();
  model.evaluate_batch(pb.X.data(), pb.T.data(), kRows);
  EXPECT_NEAR(model.read_totals().front()[0] / kRows, reference(spec, p64, pb.X, pb.T).loss, 1e-5);
}

}  // namespace
}  // namespace mf
