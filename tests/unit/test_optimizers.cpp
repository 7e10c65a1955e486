// Optimizer updates on CpuBackend against Keras's formulas.
//
// Adam (tf.keras):  alpha = lr*sqrt(1-b2^t)/(1-b1^t)
//                   m += (g-m)(1-b1);  v += (g*g-v)(1-b2);  w -= alpha*m/(sqrt(v)+eps)
// SGD  (tf.keras):  velocity = momentum*velocity - lr*g;  w += velocity
//
// The expected values are computed here in double from those formulas, and the
// literal tables below were computed independently (Python, float64) from the
// same formulas; the backend runs in float32, hence tolerances of ~1e-6.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.h"
#include "nn/model.h"
#include "test_support.h"

namespace mf {
namespace {

const std::vector<float> kW0 = {0.5f, -1.0f, 2.0f, 0.0f};
const std::vector<std::vector<float>> kGrads = {
    {0.1f, -0.2f, 3.0f, 0.0f},
    {0.05f, 0.1f, -1.0f, 1e-3f},
    {-0.3f, 0.0f, 0.5f, -2.0f},
};

double adam_alpha(double lr, double b1, double b2, int t) {
  return lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
}

TEST(Adam, ThreeStepsMatchKerasFormulas) {
  const float lr = 0.01f, b1 = 0.9f, b2 = 0.999f, eps = 1e-7f;
  CpuBackend cpu;
  std::vector<float> w = kW0, m(4, 0.f), v(4, 0.f);
  std::vector<double> rw(kW0.begin(), kW0.end()), rm(4, 0.0), rv(4, 0.0);
  // Python float64, same formulas: w after steps 1, 2, 3.
  const double literal[3][4] = {{0.490000316, -0.990000158, 1.990000011, 0.0},
                                {0.480678784, -0.987336825, 1.985997829, -0.007417911},
                                {0.484150984, -0.985278062, 1.981943579, -0.001032660}};
  const MemberSettings settings = adam_settings(lr, 0.9, 0.999, eps);
  for (int t = 1; t <= 3; ++t) {
    const std::vector<float>& g = kGrads[t - 1];
    const double alpha = adam_alpha(lr, b1, b2, t);
    const std::vector<float> before = w;
    StepState step{t, 0};
    cpu.adam(w.data(), g.data(), m.data(), v.data(), 4, &settings, 1, {.step = &step});
    for (int i = 0; i < 4; ++i) {
      rm[i] += (g[i] - rm[i]) * (1 - 0.9);
      rv[i] += (double(g[i]) * g[i] - rv[i]) * (1 - 0.999);
      rw[i] -= alpha * rm[i] / (std::sqrt(rv[i]) + eps);
      EXPECT_NEAR(m[i], rm[i], 1e-6) << "step " << t << " m[" << i << "]";
      EXPECT_NEAR(v[i], rv[i], 1e-6) << "step " << t << " v[" << i << "]";
      EXPECT_NEAR(w[i], rw[i], 2e-6) << "step " << t << " w[" << i << "]";
      EXPECT_NEAR(w[i], literal[t - 1][i], 2e-6) << "step " << t << " w[" << i << "] vs literal";
    }
    if (t == 1) {
      // Adam's first step moves every weight with a non-zero gradient by ~lr, whatever |g|.
      for (int i = 0; i < 3; ++i) EXPECT_NEAR(std::abs(w[i] - before[i]), lr, 1e-5) << i;
      EXPECT_EQ(w[3], before[3]);  // zero gradient: no move
      EXPECT_LT(w[0], before[0]);  // against the gradient's sign
      EXPECT_GT(w[1], before[1]);
    }
  }
}

TEST(Adam, StepConstantsAreKerasFloat32Arithmetic) {
  const AdamStep s = adam_step(adam_settings(1e-3f, 0.9, 0.999, 1e-7f), 1);
  EXPECT_EQ(s.one_minus_beta_2, 0.001f);  // 1 - 0.999 in double, then float32; 1 - 0.999f would differ
  EXPECT_NE(s.one_minus_beta_2, 1.f - 0.999f);
  EXPECT_EQ(s.one_minus_beta_1, 0.1f);
  const float b2 = 0.999f, b1 = 0.9f;  // beta^1 in float32, as Keras casts beta to the variable's dtype
  EXPECT_EQ(s.alpha, 1e-3f * std::sqrt(1.f - b2) / (1.f - b1));
}

TEST(Adam, EpsilonDominatesATinyGradient) {
  // With a tiny gradient epsilon dominates sqrt(v): the step is far below lr.
  CpuBackend cpu;
  float w = 1.f, m = 0.f, v = 0.f;
  const float g = 1e-9f, lr = 0.01f;
  const MemberSettings settings = adam_settings(lr, 0.9, 0.999, 1e-7f);
  StepState step{1, 0};
  cpu.adam(&w, &g, &m, &v, 1, &settings, 1, {.step = &step});
  // m = 1e-10, sqrt(v) = sqrt(1e-3)*1e-9 = 3.16e-11; step = alpha*1e-10/(3.16e-11+1e-7) ~ 3.16e-5
  EXPECT_NEAR(1.f - w, adam_alpha(lr, 0.9, 0.999, 1) * 1e-10 / (std::sqrt(1e-3) * 1e-9 + 1e-7), 2e-7);
  EXPECT_LT(1.f - w, lr / 100);
}

void check_sgd(float momentum, const double (&literal)[3][4]) {
  const float lr = 0.1f;
  CpuBackend cpu;
  std::vector<float> w = kW0, velocity(4, 0.f);
  std::vector<double> rw(kW0.begin(), kW0.end()), rvel(4, 0.0);
  MemberSettings settings;
  settings.learning_rate = lr, settings.momentum = momentum;
  for (int t = 0; t < 3; ++t) {
    cpu.sgd(w.data(), kGrads[t].data(), velocity.data(), 4, &settings, 1);
    for (int i = 0; i < 4; ++i) {
      rvel[i] = momentum * rvel[i] - double(lr) * kGrads[t][i];
      rw[i] += rvel[i];
      EXPECT_NEAR(velocity[i], rvel[i], 1e-6) << "step " << t + 1 << " velocity[" << i << "]";
      EXPECT_NEAR(w[i], rw[i], 1e-6) << "step " << t + 1 << " w[" << i << "]";
      EXPECT_NEAR(w[i], literal[t][i], 1e-6) << "step " << t + 1 << " w[" << i << "] vs literal";
    }
  }
}

TEST(Sgd, PlainStep) {
  const double literal[3][4] = {{0.49, -0.98, 1.7, 0.0}, {0.485, -0.99, 1.8, -0.0001}, {0.515, -0.99, 1.75, 0.1999}};
  check_sgd(0.f, literal);
}

TEST(Sgd, Momentum) {
  const double literal[3][4] = {
      {0.49, -0.98, 1.7, 0.0}, {0.476, -0.972, 1.53, -0.0001}, {0.4934, -0.9648, 1.327, 0.19981}};
  check_sgd(0.9f, literal);
}

// ---- Model level: one train_batch is one optimizer step on the hand-computed gradient ----

// y = x·W + b with 2 inputs and 1 output, mse over a batch of 4:
// dL/dW_i = 2/m Σ_r (y_r - t_r) x_ri,  dL/db = 2/m Σ_r (y_r - t_r).
struct LinearProblem {
  std::vector<float> params = {0.3f, -0.7f, 0.1f};  // W(2,1), b(1)
  std::vector<float> X = {1.f, 2.f, -1.f, 0.5f, 0.f, -3.f, 2.f, 1.f};
  std::vector<float> T = {0.5f, -1.f, 2.f, 0.f};
  static constexpr int m = 4;

  // The gradient at `at`, or at `params`.
  std::vector<double> gradient(const std::vector<float>& at) const {
    std::vector<double> g(3, 0.0);
    for (int r = 0; r < m; ++r) {
      const double y = double(X[2 * r]) * at[0] + double(X[2 * r + 1]) * at[1] + at[2];
      const double e = y - T[r];
      g[0] += 2.0 / m * e * X[2 * r];
      g[1] += 2.0 / m * e * X[2 * r + 1];
      g[2] += 2.0 / m * e;
    }
    return g;
  }
  std::vector<double> gradient() const { return gradient(params); }
};

// One train_batch on the problem's batch; returns the parameters after it.
std::vector<float> train_step(Model& model, const LinearProblem& p) {
  model.train_batch(p.X.data(), p.T.data(), p.m);
  return model.get_params();
}

ModelSpec linear_spec(OptimizerSpec optimizer) {
  ModelSpec spec = test::mlp(2, {{1, Activation::linear}}, Loss::mse, "linear");
  spec.optimizer = optimizer;
  spec.fit.batch_size = 4;
  return spec;
}

TEST(ModelStep, AdamTrainBatchIsOneAdamStep) {
  OptimizerSpec adam;
  adam.learning_rate = 0.05f;
  CpuBackend cpu;
  Model model(linear_spec(adam), cpu);
  LinearProblem p;
  model.set_params(p.params);
  const std::vector<double> g = p.gradient();
  // Gradient itself first.
  model.compute_gradients(p.X.data(), p.T.data(), p.m);
  const std::vector<float> got_g = model.get_gradients();
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(got_g[i], g[i], 1e-5 * std::max(1.0, std::abs(g[i]))) << i;

  model.set_params(p.params);
  const std::vector<float> after = train_step(model, p);
  const double alpha = adam_alpha(0.05, 0.9f, 0.999f, 1);
  for (int i = 0; i < 3; ++i) {
    const double mi = (1 - double(0.9f)) * g[i], vi = (1 - double(0.999f)) * g[i] * g[i];
    const double want = p.params[i] - alpha * mi / (std::sqrt(vi) + 1e-7);
    EXPECT_NEAR(after[i], want, 1e-6) << i;
    EXPECT_NEAR(std::abs(after[i] - p.params[i]), 0.05, 1e-5) << i;  // first Adam step ~ lr
  }

  // The second step uses t = 2 (bias corrections move on) and the moments of step 1.
  const std::vector<double> g2 = p.gradient(after);
  const std::vector<float> after2 = train_step(model, p);
  const double alpha2 = adam_alpha(0.05, 0.9f, 0.999f, 2);
  for (int i = 0; i < 3; ++i) {
    double mi = (1 - double(0.9f)) * g[i], vi = (1 - double(0.999f)) * g[i] * g[i];
    mi += (g2[i] - mi) * (1 - double(0.9f));
    vi += (g2[i] * g2[i] - vi) * (1 - double(0.999f));
    const double want = after[i] - alpha2 * mi / (std::sqrt(vi) + 1e-7);
    EXPECT_NEAR(after2[i], want, 2e-6) << i;
  }
}

TEST(ModelStep, SgdTrainBatchIsOneSgdStep) {
  for (float momentum : {0.f, 0.9f}) {
    OptimizerSpec sgd;
    sgd.kind = OptimizerKind::sgd;
    sgd.learning_rate = 0.1f;
    sgd.momentum = momentum;
    CpuBackend cpu;
    Model model(linear_spec(sgd), cpu);
    LinearProblem p;
    model.set_params(p.params);
    const std::vector<double> g = p.gradient();
    const std::vector<float> after = train_step(model, p);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(after[i], p.params[i] - 0.1 * g[i], 1e-6) << "momentum " << momentum;

    // Step 2: velocity = momentum*(-lr*g1) - lr*g2.
    const std::vector<double> g2 = p.gradient(after);
    const std::vector<float> after2 = train_step(model, p);
    for (int i = 0; i < 3; ++i)
      EXPECT_NEAR(after2[i], after[i] + momentum * (-0.1 * g[i]) - 0.1 * g2[i], 1e-6) << "momentum " << momentum;
  }
}

}  // namespace
}  // namespace mf
