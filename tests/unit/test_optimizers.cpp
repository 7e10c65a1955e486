// Optimizer updates on CpuBackend against Keras 3's formulas (keras/src/optimizers/*.py), computed
// here in double, apart from the code under test (kernels/optimizer_math.h):
//
// Adam:     alpha = lr*sqrt(1-b2^t)/(1-b1^t); m += (g-m)(1-b1); v += (g*g-v)(1-b2);
//           w -= alpha*m/(sqrt(v)+eps)  (amsgrad: v_hat = max(v_hat, v) in place of v)
// AdamW:    Adam after w -= w*wd*lr
// SGD:      velocity = momentum*velocity - lr*g; w += velocity, or with nesterov
//           w += momentum*velocity - lr*g; w -= lr*g without momentum
// RMSprop:  v = rho*v + (1-rho)*g^2 (centered: a = rho*a + (1-rho)*g, v - a^2 in the root);
//           inc = lr*g/sqrt(v+eps); momentum: mom = momentum*mom + inc; w -= mom (else w -= inc)
// Adagrad:  acc += g^2; w -= lr*g/sqrt(acc+eps), acc starting at initial_accumulator_value
// Adamax:   m += (g-m)(1-b1); u = max(b2*u, |g|); w -= lr*m/((1-b1^t)*(u+eps))
// Nadam:    u_t = b1*(1-0.5*0.96^t), P_t = P_{t-1}*u_t; m, v as Adam's;
//           m_hat = u_{t+1}*m/(1-P_t*u_{t+1}) + (1-u_t)*g/(1-P_t); v_hat = v/(1-b2^t);
//           w -= m_hat*lr/(sqrt(v_hat)+eps)
// Lion:     u = m*b1 + g*(1-b1); w -= lr*sign(u); m = m*b2 + g*(1-b2), 1 - b in float32
// Clipping: clipnorm g*c/max(|g|_tensor, c); global_clipnorm g*c*min(1/|g|_all, 1/c); clipvalue
// [-c, c]
//
// The backend runs in float32, hence tolerances of ~1e-6. The Adam and SGD tables were computed
// independently (Python, float64) from the same formulas.
#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.h"
#include "nn/model.h"
#include "nn/settings.h"
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

// An optimizer's steps on the CPU backend over one tensor of kW0's size, its state kept between
// them.
class Stepper {
 public:
  explicit Stepper(const OptimizerSpec& o, std::vector<float> w = kW0) : w_(std::move(w)) {
    ModelSpec spec;
    spec.optimizer = o;
    settings_ = member_settings(spec);
    for (auto& slot : slots_) slot.assign(w_.size(), 0.f);
    if (o.kind == OptimizerKind::adagrad) slots_[0].assign(w_.size(), o.initial_accumulator_value);
    tensor_ = {0, int64_t(w_.size()), 0, TensorRole::kernel, 0};
    step_.kind = o.kind, step_.clip = o.clip, step_.momentum_slot = momentum_slot(o),
    step_.amsgrad = o.amsgrad;
    step_.count = int64_t(w_.size()), step_.tensors = &tensor_, step_.tensor_count = 1;
    step_.blocks = param_blocks(step_.count), step_.layers = &layer_, step_.batch_rows = 1;
  }
  // Step t (from 1) with gradient g; returns the weights after it.
  const std::vector<float>& step(const std::vector<float>& g) {
    ++state_.t;
    step_.params = w_.data(), step_.grads = g.data(), step_.settings = &settings_;
    for (int k = 0; k < 3; ++k) step_.slot[k] = slots_[k].data();
    double norm = 0;
    for (float x : g) norm += double(x) * x;
    // the tensor's and the global one: one tensor
    norms_ = {float(std::sqrt(norm)), float(std::sqrt(norm))};
    step_.norms = norms_.data();
    cpu_.optimizer_step(step_, {.step = &state_});
    return w_;
  }
  const std::vector<float>& slot(int k) const { return slots_[k]; }

 private:
  CpuBackend cpu_;
  std::vector<float> w_, slots_[3], norms_;
  MemberSettings settings_;
  LayerSettings layer_;
  ParamTensor tensor_;
  OptimizerStep step_;
  StepState state_;
};

OptimizerSpec optimizer(OptimizerKind kind, float lr) {
  OptimizerSpec o;
  o.kind = kind;
  o.learning_rate = lr;
  return o;
}

TEST(Adam, ThreeStepsMatchKerasFormulas) {
  const float lr = 0.01f, b1 = 0.9f, b2 = 0.999f, eps = 1e-7f;
  Stepper adam(optimizer(OptimizerKind::adam, lr));
  std::vector<double> rw(kW0.begin(), kW0.end()), rm(4, 0.0), rv(4, 0.0);
  // Python float64, same formulas: w after steps 1, 2, 3.
  const double literal[3][4] = {{0.490000316, -0.990000158, 1.990000011, 0.0},
                                {0.480678784, -0.987336825, 1.985997829, -0.007417911},
                                {0.484150984, -0.985278062, 1.981943579, -0.001032660}};
  std::vector<float> before = kW0;
  for (int t = 1; t <= 3; ++t) {
    const std::vector<float>& g = kGrads[t - 1];
    const double alpha = adam_alpha(lr, b1, b2, t);
    const std::vector<float> w = adam.step(g);
    for (int i = 0; i < 4; ++i) {
      rm[i] += (g[i] - rm[i]) * (1 - 0.9);
      rv[i] += (double(g[i]) * g[i] - rv[i]) * (1 - 0.999);
      rw[i] -= alpha * rm[i] / (std::sqrt(rv[i]) + eps);
      EXPECT_NEAR(adam.slot(0)[i], rm[i], 1e-6) << "step " << t << " m[" << i << "]";
      EXPECT_NEAR(adam.slot(1)[i], rv[i], 1e-6) << "step " << t << " v[" << i << "]";
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
  const MemberSettings settings = member_settings(ModelSpec{});
  const StepConstants c = step_constants(OptimizerKind::adam, settings.optimizer, 1, 1.f);
  EXPECT_EQ(settings.optimizer.one_minus_beta_2, 0.001f);  // 1 - 0.999 in double, then float32
  EXPECT_NE(settings.optimizer.one_minus_beta_2, 1.f - 0.999f);
  EXPECT_EQ(settings.optimizer.one_minus_beta_1, 0.1f);
  // beta^1 in float32, as Keras casts beta to the variable's dtype
  const float b2 = 0.999f, b1 = 0.9f;
  EXPECT_EQ(c.alpha, 1e-3f * std::sqrt(1.f - b2) / (1.f - b1));
}

TEST(Adam, EpsilonDominatesATinyGradient) {
  // With a tiny gradient epsilon dominates sqrt(v): the step is far below lr.
  const float lr = 0.01f;
  Stepper adam(optimizer(OptimizerKind::adam, lr), {1.f});
  const float w = adam.step({1e-9f})[0];
  // m = 1e-10, sqrt(v) = sqrt(1e-3)*1e-9 = 3.16e-11; step = alpha*1e-10/(3.16e-11+1e-7) ~ 3.16e-5
  EXPECT_NEAR(1.f - w, adam_alpha(lr, 0.9, 0.999, 1) * 1e-10 / (std::sqrt(1e-3) * 1e-9 + 1e-7),
              2e-7);
  EXPECT_LT(1.f - w, lr / 100);
}

TEST(Adam, AmsgradDividesByTheLargestSecondMoment) {
  OptimizerSpec o = optimizer(OptimizerKind::adam, 0.01f);
  o.amsgrad = true;
  Stepper adam(o);
  std::vector<double> rw(kW0.begin(), kW0.end()), rm(4, 0.0), rv(4, 0.0), rhat(4, 0.0);
  for (int t = 1; t <= 3; ++t) {
    const std::vector<float> w = adam.step(kGrads[t - 1]);
    for (int i = 0; i < 4; ++i) {
      const double g = kGrads[t - 1][i];
      rm[i] += (g - rm[i]) * 0.1, rv[i] += (g * g - rv[i]) * 0.001,
          rhat[i] = std::max(rhat[i], rv[i]);
      rw[i] -= adam_alpha(0.01, 0.9f, 0.999f, t) * rm[i] / (std::sqrt(rhat[i]) + 1e-7);
      EXPECT_NEAR(w[i], rw[i], 2e-6) << "step " << t << " w[" << i << "]";
    }
  }
}

// AdamW is Adam after Keras's weight decay, w -= w * weight_decay * lr (0.004 by default).
TEST(AdamW, DecaysTheWeightsThenStepsAsAdam) {
  OptimizerSpec o = optimizer(OptimizerKind::adamw, 0.01f);
  o.weight_decay = 0.004f;
  Stepper adamw(o);
  std::vector<double> rw(kW0.begin(), kW0.end()), rm(4, 0.0), rv(4, 0.0);
  for (int t = 1; t <= 3; ++t) {
    const std::vector<float> w = adamw.step(kGrads[t - 1]);
    for (int i = 0; i < 4; ++i) {
      const double g = kGrads[t - 1][i];
      rw[i] -= rw[i] * double(0.004f) * double(0.01f);
      rm[i] += (g - rm[i]) * 0.1, rv[i] += (g * g - rv[i]) * 0.001;
      rw[i] -= adam_alpha(0.01, 0.9f, 0.999f, t) * rm[i] / (std::sqrt(rv[i]) + 1e-7);
      EXPECT_NEAR(w[i], rw[i], 2e-6) << "step " << t << " w[" << i << "]";
    }
  }
}

void check_sgd(float momentum, bool nesterov, const double (*literal)[4]) {
  const float lr = 0.1f;
  OptimizerSpec o = optimizer(OptimizerKind::sgd, lr);
  o.momentum = momentum, o.nesterov = nesterov;
  Stepper sgd(o);
  std::vector<double> rw(kW0.begin(), kW0.end()), rvel(4, 0.0);
  for (int t = 0; t < 3; ++t) {
    const std::vector<float> w = sgd.step(kGrads[t]);
    for (int i = 0; i < 4; ++i) {
      rvel[i] = momentum * rvel[i] - double(lr) * kGrads[t][i];
      rw[i] += nesterov ? momentum * rvel[i] - double(lr) * kGrads[t][i] : rvel[i];
      if (momentum > 0) {
        EXPECT_NEAR(sgd.slot(0)[i], rvel[i], 1e-6) << "step " << t + 1 << " velocity[" << i << "]";
      }
      EXPECT_NEAR(w[i], rw[i], 1e-6) << "step " << t + 1 << " w[" << i << "]";
      if (literal) {
        EXPECT_NEAR(w[i], literal[t][i], 1e-6) << "step " << t + 1 << " w[" << i << "] vs literal";
      }
    }
  }
}

TEST(Sgd, PlainStep) {
  const double literal[3][4] = {
      {0.49, -0.98, 1.7, 0.0}, {0.485, -0.99, 1.8, -0.0001}, {0.515, -0.99, 1.75, 0.1999}};
  check_sgd(0.f, false, literal);
}

TEST(Sgd, Momentum) {
  const double literal[3][4] = {
      {0.49, -0.98, 1.7, 0.0}, {0.476, -0.972, 1.53, -0.0001}, {0.4934, -0.9648, 1.327, 0.19981}};
  check_sgd(0.9f, false, literal);
}

// Nesterov's look-ahead: the step is momentum * velocity - lr * g, not the velocity.
TEST(Sgd, Nesterov) {
  check_sgd(0.9f, true, nullptr);
  OptimizerSpec plain = optimizer(OptimizerKind::sgd, 0.1f), nesterov = plain;
  plain.momentum = nesterov.momentum = 0.9f;
  nesterov.nesterov = true;
  Stepper a(plain), b(nesterov);
  a.step(kGrads[0]), b.step(kGrads[0]);
  EXPECT_NE(a.step(kGrads[1]), b.step(kGrads[1])) << "the look-ahead changes the second step";
}

void check_rmsprop(float momentum, bool centered) {
  OptimizerSpec o = optimizer(OptimizerKind::rmsprop, 0.01f);
  o.momentum = momentum, o.centered = centered;
  Stepper rms(o);
  std::vector<double> rw(kW0.begin(), kW0.end()), rv(4, 0.0), ra(4, 0.0), rmom(4, 0.0);
  const double rho = 0.9;
  for (int t = 0; t < 3; ++t) {
    const std::vector<float> w = rms.step(kGrads[t]);
    for (int i = 0; i < 4; ++i) {
      const double g = kGrads[t][i];
      rv[i] = rho * rv[i] + (1 - rho) * g * g;
      ra[i] = rho * ra[i] + (1 - rho) * g;
      const double denominator = centered ? rv[i] - ra[i] * ra[i] + 1e-7 : rv[i] + 1e-7;
      const double increment = double(0.01f) * g / std::sqrt(denominator);
      if (momentum > 0)
        rmom[i] = momentum * rmom[i] + increment, rw[i] -= rmom[i];
      else
        rw[i] -= increment;
      EXPECT_NEAR(w[i], rw[i], 2e-6) << "momentum " << momentum << " centered " << centered
                                     << " step " << t + 1 << " w[" << i << "]";
    }
  }
}

TEST(RMSprop, EveryForm) {
  check_rmsprop(0.f, false);
  check_rmsprop(0.5f, false);
  check_rmsprop(0.f, true);
  check_rmsprop(0.5f, true);
}

TEST(Adagrad, AccumulatesFromItsInitialValue) {
  OptimizerSpec o = optimizer(OptimizerKind::adagrad, 0.1f);
  o.initial_accumulator_value = 0.1f;
  Stepper adagrad(o);
  std::vector<double> rw(kW0.begin(), kW0.end()), acc(4, double(0.1f));
  for (int t = 0; t < 3; ++t) {
    const std::vector<float> w = adagrad.step(kGrads[t]);
    for (int i = 0; i < 4; ++i) {
      const double g = kGrads[t][i];
      acc[i] += g * g;
      rw[i] -= double(0.1f) * g / std::sqrt(acc[i] + 1e-7);
      EXPECT_NEAR(w[i], rw[i], 2e-6) << "step " << t + 1 << " w[" << i << "]";
    }
  }
}

TEST(Adamax, DividesByTheInfinityNorm) {
  Stepper adamax(optimizer(OptimizerKind::adamax, 0.01f));
  std::vector<double> rw(kW0.begin(), kW0.end()), rm(4, 0.0), ru(4, 0.0);
  for (int t = 1; t <= 3; ++t) {
    const std::vector<float> w = adamax.step(kGrads[t - 1]);
    for (int i = 0; i < 4; ++i) {
      const double g = kGrads[t - 1][i];
      rm[i] += (g - rm[i]) * 0.1;
      ru[i] = std::max(double(0.999f) * ru[i], std::abs(g));
      rw[i] -= double(0.01f) * rm[i] / ((1 - std::pow(double(0.9f), t)) * (ru[i] + 1e-7));
      EXPECT_NEAR(w[i], rw[i], 2e-6) << "step " << t << " w[" << i << "]";
    }
  }
}

TEST(Nadam, FollowsItsMomentumSchedule) {
  Stepper nadam(optimizer(OptimizerKind::nadam, 0.01f));
  std::vector<double> rw(kW0.begin(), kW0.end()), rm(4, 0.0), rv(4, 0.0);
  const double b1 = 0.9f, b2 = 0.999f;
  double product = 1;
  for (int t = 1; t <= 3; ++t) {
    const double u_t = b1 * (1 - 0.5 * std::pow(0.96, t)),
                 u_next = b1 * (1 - 0.5 * std::pow(0.96, t + 1));
    product *= u_t;
    const std::vector<float> w = nadam.step(kGrads[t - 1]);
    for (int i = 0; i < 4; ++i) {
      const double g = kGrads[t - 1][i];
      rm[i] += (g - rm[i]) * (1 - b1), rv[i] += (g * g - rv[i]) * (1 - b2);
      const double m_hat = u_next * rm[i] / (1 - product * u_next) + (1 - u_t) * g / (1 - product);
      const double v_hat = rv[i] / (1 - std::pow(b2, t));
      rw[i] -= m_hat * double(0.01f) / (std::sqrt(v_hat) + 1e-7);
      EXPECT_NEAR(w[i], rw[i], 2e-6) << "step " << t << " w[" << i << "]";
    }
  }
}

// Clipping comes first, by Keras's three rules: the tensor's norm, the global norm, each value.
TEST(Clipping, ByNormGlobalNormAndValue) {
  const std::vector<float>& g = kGrads[0];  // norm sqrt(0.01 + 0.04 + 9) = 3.0083...
  double norm = 0;
  for (float x : g) norm += double(x) * x;
  norm = std::sqrt(norm);
  for (ClipKind kind : {ClipKind::norm, ClipKind::global_norm, ClipKind::value}) {
    OptimizerSpec o = optimizer(OptimizerKind::sgd, 0.1f);
    o.clip = kind, o.clip_value = 0.5f;
    Stepper sgd(o);
    const std::vector<float> w = sgd.step(g);
    for (int i = 0; i < 4; ++i) {
      const double clipped =
          kind == ClipKind::value ? std::clamp(double(g[i]), -0.5, 0.5) : g[i] * 0.5 / norm;
      EXPECT_NEAR(w[i], kW0[i] - double(0.1f) * clipped, 1e-6)
          << "clip " << int(kind) << " w[" << i << "]";
    }
  }
  OptimizerSpec loose = optimizer(OptimizerKind::sgd, 0.1f);
  // a norm under the threshold: the gradient as it is
  loose.clip = ClipKind::norm, loose.clip_value = 100.f;
  Stepper sgd(loose);
  const std::vector<float> w = sgd.step(g);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(w[i], kW0[i] - double(0.1f) * g[i], 1e-6) << i;
}

// ---- Learning-rate schedules: Keras's formulas at optimizer step `step` ----

TEST(Schedules, EveryScheduleAtKerasSteps) {
  const auto rate = [](ScheduleSpec s, int64_t step) {
    return scheduled_rate(schedule_settings(s), step);
  };
  ScheduleSpec exponential;
  exponential.kind = ScheduleKind::exponential_decay, exponential.initial_learning_rate = 0.1;
  exponential.decay_steps = 10, exponential.decay_rate = 0.5;
  EXPECT_NEAR(rate(exponential, 0), 0.1, 1e-8);
  EXPECT_NEAR(rate(exponential, 15), 0.1 * std::pow(0.5, 1.5), 1e-8);
  exponential.staircase = true;
  EXPECT_NEAR(rate(exponential, 15), 0.05, 1e-8);

  ScheduleSpec inverse = exponential;
  inverse.kind = ScheduleKind::inverse_time_decay, inverse.staircase = false;
  EXPECT_NEAR(rate(inverse, 15), 0.1 / (1 + 0.5 * 1.5), 1e-8);

  ScheduleSpec cosine;
  cosine.kind = ScheduleKind::cosine_decay, cosine.initial_learning_rate = 0.1,
  cosine.decay_steps = 100;
  cosine.alpha = 0.1;
  EXPECT_NEAR(rate(cosine, 25), 0.1 * (0.9 * 0.5 * (1 + std::cos(M_PI * 0.25)) + 0.1), 1e-7);
  EXPECT_NEAR(rate(cosine, 500), 0.1 * 0.1, 1e-8) << "past decay_steps: alpha's share";
  cosine.warmup_target = 0.2, cosine.warmup_steps = 10;
  EXPECT_NEAR(rate(cosine, 5), 0.1 + (0.2 - 0.1) * 0.5, 1e-8) << "linear warmup to the target";
  EXPECT_NEAR(rate(cosine, 35), 0.2 * (0.9 * 0.5 * (1 + std::cos(M_PI * 0.25)) + 0.1), 1e-7)
      << "then decays from it";
  cosine.initial_learning_rate = 0;  // Keras's warm-up from nothing
  EXPECT_EQ(rate(cosine, 0), 0.0);
  EXPECT_NEAR(rate(cosine, 5), 0.2 * 0.5, 1e-8);
  EXPECT_NEAR(rate(cosine, 10), 0.2, 1e-8) << "the target at the warm-up's end";

  ScheduleSpec piecewise;
  piecewise.kind = ScheduleKind::piecewise_constant_decay, piecewise.boundaries = {10, 20};
  piecewise.values = {1.0, 0.5, 0.1};
  EXPECT_FLOAT_EQ(rate(piecewise, 10), 1.0f) << "step <= the first boundary";
  EXPECT_FLOAT_EQ(rate(piecewise, 11), 0.5f);
  EXPECT_FLOAT_EQ(rate(piecewise, 20), 0.5f);
  EXPECT_FLOAT_EQ(rate(piecewise, 21), 0.1f);

  ScheduleSpec polynomial;
  polynomial.kind = ScheduleKind::polynomial_decay, polynomial.initial_learning_rate = 0.1;
  polynomial.decay_steps = 100, polynomial.end_learning_rate = 0.01, polynomial.power = 2;
  EXPECT_NEAR(rate(polynomial, 30), (0.1 - 0.01) * 0.7 * 0.7 + 0.01, 1e-8);
  EXPECT_NEAR(rate(polynomial, 300), 0.01, 1e-8) << "held at the end";
  polynomial.cycle = true;
  EXPECT_NEAR(rate(polynomial, 130), (0.1 - 0.01) * std::pow(1 - 130.0 / 200, 2) + 0.01, 1e-8)
      << "cycles";
}

// A schedule is evaluated at the optimizer's iterations before the step: step t takes schedule(t -
// 1).
TEST(Schedules, StepTTakesTheRateAtTMinusOne) {
  OptimizerSpec o = optimizer(OptimizerKind::sgd, 0.1f);
  ScheduleSpec piecewise;
  piecewise.kind = ScheduleKind::piecewise_constant_decay, piecewise.boundaries = {1};
  piecewise.values = {0.1, 0.01};
  o.schedule = piecewise;
  Stepper sgd(o, {0.f});
  EXPECT_NEAR(sgd.step({1.f})[0], -0.1f, 1e-7) << "step 1: schedule(0)";
  EXPECT_NEAR(sgd.step({1.f})[0], -0.2f, 1e-7) << "step 2: schedule(1), still the first value";
  EXPECT_NEAR(sgd.step({1.f})[0], -0.21f, 1e-7) << "step 3: schedule(2)";
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
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(got_g[i], g[i], 1e-5 * std::max(1.0, std::abs(g[i]))) << i;

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
    for (int i = 0; i < 3; ++i)
      EXPECT_NEAR(after[i], p.params[i] - 0.1 * g[i], 1e-6) << "momentum " << momentum;

    // Step 2: velocity = momentum*(-lr*g1) - lr*g2.
    const std::vector<double> g2 = p.gradient(after);
    const std::vector<float> after2 = train_step(model, p);
    for (int i = 0; i < 3; ++i)
      EXPECT_NEAR(after2[i], after[i] + momentum * (-0.1 * g[i]) - 0.1 * g2[i], 1e-6)
          << "momentum " << momentum;
  }
}

TEST(Lion, StepsByTheSignOfAnInterpolatedMomentum) {
  OptimizerSpec o = optimizer(OptimizerKind::lion, 0.01f);
  o.beta_1 = 0.9, o.beta_2 = 0.99;  // Keras's Lion defaults
  Stepper lion(o);
  std::vector<double> rw(kW0.begin(), kW0.end()), rm(4, 0.0);
  const double b1 = 0.9f, b2 = 0.99f;
  for (int t = 1; t <= 3; ++t) {
    const std::vector<float> w = lion.step(kGrads[t - 1]);
    for (int i = 0; i < 4; ++i) {
      const double g = kGrads[t - 1][i], u = rm[i] * b1 + g * (1 - b1);
      rw[i] -= double(0.01f) * (u > 0 ? 1 : u < 0 ? -1 : 0);
      rm[i] = rm[i] * b2 + g * (1 - b2);
      EXPECT_NEAR(w[i], rw[i], 1e-6) << "step " << t << " w[" << i << "]";
    }
  }
}

// A model given another's weights and optimizer state (what a .keras file carries) steps on as the
// other does, bit for bit: every slot, the step count (Adam's bias corrections, a schedule's step)
// and Nadam's product move with it.
TEST(ModelStep, OptimizerStateCarriesTheNextStepExactly) {
  std::vector<OptimizerSpec> forms;
  for (int k = 0; k < kOptimizerCount; ++k) forms.push_back(optimizer(OptimizerKind(k), 0.05f));
  OptimizerSpec amsgrad = optimizer(OptimizerKind::adam, 0.05f), rmsprop = forms[2];
  amsgrad.amsgrad = true;
  rmsprop.momentum = 0.9, rmsprop.centered = true;
  OptimizerSpec sgd = optimizer(OptimizerKind::sgd, 0.05f);
  sgd.momentum = 0.9;
  forms.insert(forms.end(), {amsgrad, rmsprop, sgd});
  for (const OptimizerSpec& form : forms) {
    SCOPED_TRACE(testing::Message()
                 << "optimizer " << int(form.kind) << ", slots " << optimizer_slots(form).size());
    CpuBackend cpu;
    Model trained(linear_spec(form), cpu), loaded(linear_spec(form), cpu);
    LinearProblem p;
    for (int step = 0; step < 3; ++step) train_step(trained, p);
    const OptimizerState state = trained.optimizer_state();
    EXPECT_EQ(state.iterations, 3);
    EXPECT_EQ(state.slots.size(), optimizer_slots(form).size());
    // Nadam's product of its momentum schedule beta_1 (1 - 0.5 * 0.96^t) over steps 1 to 3
    double product = 1;
    for (int t = 1; t <= 3; ++t) product *= 0.9 * (1 - 0.5 * std::pow(0.96, t));
    EXPECT_NEAR(state.nadam_product, form.kind == OptimizerKind::nadam ? product : 1.0, 1e-6);
    loaded.set_weights(trained.get_weights());
    loaded.set_optimizer_state(state);
    EXPECT_EQ(train_step(loaded, p), train_step(trained, p));
    EXPECT_EQ(train_step(loaded, p), train_step(trained, p));
    const OptimizerState moved = loaded.optimizer_state();
    EXPECT_EQ(moved.iterations, 5);
    EXPECT_EQ(moved.slots, trained.optimizer_state().slots);
  }
  CpuBackend cpu;
  Model model(linear_spec(forms[0]), cpu);
  OptimizerState wrong = model.optimizer_state();
  wrong.slots.pop_back();
  EXPECT_THROW(model.set_optimizer_state(wrong), std::invalid_argument) << "a slot missing";
  wrong = model.optimizer_state();
  wrong.slots[1].push_back(0.f);
  EXPECT_THROW(model.set_optimizer_state(wrong), std::invalid_argument) << "a slot too long";
}

}  // namespace
}  // namespace mf
