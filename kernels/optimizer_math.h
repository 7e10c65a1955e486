#pragma once
// The optimizers' element math, shared by the CPU backend and the CUDA kernels: Keras 3's updates
// (keras/src/optimizers/{sgd,adam,rmsprop,adagrad,adamax,nadam,lion}.py; AdamW is Adam with weight
// decay), its learning-rate schedules (keras/src/optimizers/schedules/learning_rate_schedule.py)
// and what its base optimizer does to a gradient before the update (base_optimizer.py: clipping,
// then weight decay). Keras computes in float32 from the settings as written: a setting used as a
// factor is float32(x); one it subtracts from 1 in Python (1 - beta, 1 - rho, 1 - alpha) is that
// difference in double, then float32 (0.001f where 1 - 0.999f would be 0.00099998713f).
#include <cmath>
#include <cstdint>

#include "kernels/hd.h"
#include "runtime/names.h"

namespace mf {

// Order is part of the report's form; append only.
enum class OptimizerKind : int {
  adam = 0,
  sgd = 1,
  rmsprop = 2,
  adamw = 3,
  adagrad = 4,
  adamax = 5,
  nadam = 6,
  lion = 7
};
inline constexpr int kOptimizerCount = int(OptimizerKind::lion) + 1;
// Keras's identifiers and classes: a spec's "name" is either.
inline constexpr KerasName<OptimizerKind> kOptimizerNames[] = {
    {"adam", "Adam", OptimizerKind::adam},          {"sgd", "SGD", OptimizerKind::sgd},
    {"rmsprop", "RMSprop", OptimizerKind::rmsprop}, {"adamw", "AdamW", OptimizerKind::adamw},
    {"adagrad", "Adagrad", OptimizerKind::adagrad}, {"adamax", "Adamax", OptimizerKind::adamax},
    {"nadam", "Nadam", OptimizerKind::nadam},       {"lion", "Lion", OptimizerKind::lion}};

// Each optimizer's traits: its own Keras settings, beside every optimizer's (learning_rate,
// weight_decay, clipnorm, global_clipnorm, clipvalue); the state it keeps per parameter; how its
// 1 - beta is computed; and its Keras defaults where they differ from the others' (the rest are
// nn/spec.h's OptimizerSpec). The spec reads and writes these keys alone (nn/spec_optimizer.cpp)
// and refuses another optimizer's setting by naming who takes it; nn/settings.cpp lays out the
// slots, which optimizer_update reads as slot[0], slot[1], ... in this order.
struct OptimizerTraits {
  OptimizerKind kind;
  const char* keys[4];  // its own settings, nullptr after the last
  // the state it always keeps, nullptr after the last; amsgrad (Adam, AdamW), momentum (SGD,
  // RMSprop) and centered (RMSprop) add theirs after these (nn/settings.cpp)
  const char* slots[2];
  // 1 - beta from float32(beta), as nadam.py and lion.py compute it; else from the Python float
  // (adam.py, adamax.py), in double, then float32
  bool float32_betas = false;
  float learning_rate = 1e-3f;  // Keras: SGD's 0.01
  float weight_decay = 0.f;     // Keras: AdamW's 0.004; 0 is none
  double beta_2 = 0.999;        // Keras: Lion's 0.99
};
inline constexpr OptimizerTraits kOptimizerTraits[] = {
    {OptimizerKind::adam, {"beta_1", "beta_2", "epsilon", "amsgrad"}, {"adam m", "adam v"}},
    {OptimizerKind::sgd, {"momentum", "nesterov"}, {}, false, 0.01f},
    {OptimizerKind::rmsprop, {"rho", "momentum", "epsilon", "centered"}, {"rmsprop velocity"}},
    {OptimizerKind::adamw,
     {"beta_1", "beta_2", "epsilon", "amsgrad"},
     {"adam m", "adam v"},
     false,
     1e-3f,
     0.004f},
    {OptimizerKind::adagrad, {"initial_accumulator_value", "epsilon"}, {"adagrad accumulator"}},
    {OptimizerKind::adamax, {"beta_1", "beta_2", "epsilon"}, {"adamax m", "adamax u"}},
    {OptimizerKind::nadam, {"beta_1", "beta_2", "epsilon"}, {"nadam m", "nadam v"}, true},
    {OptimizerKind::lion, {"beta_1", "beta_2"}, {"lion momentum"}, true, 1e-3f, 0.f, 0.99},
};
// Optimizer `kind`'s entry of kOptimizerTraits.
constexpr const OptimizerTraits& optimizer_traits(OptimizerKind kind) {
  for (const OptimizerTraits& entry : kOptimizerTraits)
    if (entry.kind == kind) return entry;
  return kOptimizerTraits[0];  // never: every kind has its entry (a test checks)
}

// What the base optimizer does to the gradients first (Keras allows one of the three).
enum class ClipKind : int { none = 0, norm = 1, global_norm = 2, value = 3 };

// ---- Learning-rate schedules: the rate at optimizer step `step` (Keras's optimizer.iterations,
// the updates before this one), in float32 as Keras computes it.
enum class ScheduleKind : int {
  constant = 0,
  exponential_decay = 1,
  cosine_decay = 2,
  piecewise_constant_decay = 3,
  inverse_time_decay = 4,
  polynomial_decay = 5
};
inline constexpr int kMaxBoundaries = 16;  // PiecewiseConstantDecay's boundaries
// Keras's classes (keras.optimizers.schedules; a schedule has no identifier): a spec's "name".
inline constexpr KerasName<ScheduleKind> kScheduleNames[] = {
    {nullptr, "ExponentialDecay", ScheduleKind::exponential_decay},
    {nullptr, "CosineDecay", ScheduleKind::cosine_decay},
    {nullptr, "PiecewiseConstantDecay", ScheduleKind::piecewise_constant_decay},
    {nullptr, "InverseTimeDecay", ScheduleKind::inverse_time_decay},
    {nullptr, "PolynomialDecay", ScheduleKind::polynomial_decay}};
// Each schedule's settings, Keras's keyword arguments: the spec reads and writes these alone
// (nn/spec_optimizer.cpp), the first `required` of them without a default.
struct ScheduleTraits {
  ScheduleKind kind;
  const char* keys[5];  // nullptr after the last
  int required;
};
inline constexpr ScheduleTraits kScheduleTraits[] = {
    {ScheduleKind::exponential_decay,
     {"initial_learning_rate", "decay_steps", "decay_rate", "staircase"},
     3},
    {ScheduleKind::cosine_decay,
     {"initial_learning_rate", "decay_steps", "alpha", "warmup_target", "warmup_steps"},
     2},
    {ScheduleKind::piecewise_constant_decay, {"boundaries", "values"}, 2},
    {ScheduleKind::inverse_time_decay,
     {"initial_learning_rate", "decay_steps", "decay_rate", "staircase"},
     3},
    {ScheduleKind::polynomial_decay,
     {"initial_learning_rate", "decay_steps", "end_learning_rate", "power", "cycle"},
     2},
};
// Schedule `kind`'s entry of kScheduleTraits (constant, not a Keras schedule, has none).
constexpr const ScheduleTraits& schedule_traits(ScheduleKind kind) {
  for (const ScheduleTraits& entry : kScheduleTraits)
    if (entry.kind == kind) return entry;
  return kScheduleTraits[0];  // never for a schedule a spec names (a test checks)
}

struct Schedule {
  ScheduleKind kind = ScheduleKind::constant;
  float initial = 0;  // initial_learning_rate
  float decay_steps = 1, decay_rate = 0;
  float alpha = 0, one_minus_alpha = 1;  // CosineDecay
  bool warmup = false;                   // CosineDecay with a warmup_target
  float warmup_target = 0, warmup_steps = 0;
  float end = 0, power = 1;  // PolynomialDecay's end_learning_rate and power
  bool staircase = false, cycle = false;
  int boundaries = 0;  // PiecewiseConstantDecay: boundary[0..boundaries), value[0..boundaries]
  int64_t boundary[kMaxBoundaries] = {};
  float value[kMaxBoundaries + 1] = {};
};

// CosineDecay's decay from `from` over decay_steps (SGDR, Loshchilov & Hutter, ICLR 2017).
MF_HD float cosine_decayed(const Schedule& s, float step, float from) {
  const float cosine = 0.5f * (1.f + cosf(3.14159265358979323846f * (step / s.decay_steps)));
  return from * (s.one_minus_alpha * cosine + s.alpha);
}

MF_HD float scheduled_rate(const Schedule& s, int64_t step) {
  const float at = float(step);
  switch (s.kind) {
    case ScheduleKind::exponential_decay: {
      const float p = s.staircase ? floorf(at / s.decay_steps) : at / s.decay_steps;
      return s.initial * powf(s.decay_rate, p);
    }
    case ScheduleKind::inverse_time_decay: {
      const float p = s.staircase ? floorf(at / s.decay_steps) : at / s.decay_steps;
      return s.initial / (1.f + s.decay_rate * p);
    }
    case ScheduleKind::polynomial_decay: {
      float x = at, steps = s.decay_steps;
      // the first multiple past the step
      if (s.cycle)
        steps *= at == 0.f ? 1.f : ceilf(at / s.decay_steps);
      else
        x = fminf(x, steps);
      return (s.initial - s.end) * powf(1.f - x / steps, s.power) + s.end;
    }
    case ScheduleKind::cosine_decay: {
      if (!s.warmup) return cosine_decayed(s, fminf(at, s.decay_steps), s.initial);
      const float x = fminf(at, s.decay_steps + s.warmup_steps);
      if (x < s.warmup_steps)
        return (s.warmup_target - s.initial) * (x / s.warmup_steps) + s.initial;  // linear
      return cosine_decayed(s, x - s.warmup_steps, s.warmup_target);
    }
    case ScheduleKind::piecewise_constant_decay: {
      int i = 0;  // value i holds for boundary[i - 1] < step <= boundary[i]
      while (i < s.boundaries && step > s.boundary[i]) ++i;
      return s.value[i];
    }
    default:
      return s.initial;
  }
}

// One member's optimizer settings as the kernels read them (MemberSettings,
// kernels/member_settings.h).
struct OptimizerSettings {
  // the rate without a schedule (ReduceLROnPlateau lowers it between epochs)
  float learning_rate = 0;
  Schedule schedule;
  float beta_1 = 0, beta_2 = 0;  // float32(beta): Adam, AdamW, Adamax, Nadam, Lion
  float one_minus_beta_1 = 0, one_minus_beta_2 = 0;  // 1 - beta in double, then float32
  float epsilon = 0;
  float momentum = 0;                       // SGD, RMSprop
  float rho = 0, one_minus_rho = 0;         // RMSprop
  bool nesterov = false, centered = false;  // SGD, RMSprop
  float weight_decay = 0;                   // 0: none
  float clip = 0;                           // clipnorm, global_clipnorm or clipvalue
};

// The rate of optimizer step t (from 1): the schedule's at t - 1, or the constant one.
MF_HD float current_rate(const OptimizerSettings& s, int64_t t) {
  return s.schedule.kind == ScheduleKind::constant ? s.learning_rate
                                                   : scheduled_rate(s.schedule, t - 1);
}

// ---- What every optimizer does to a gradient first: the regularizers' gradient (part of the loss
// Keras differentiates), clipping (base_optimizer.py's _clip_gradients), then weight decay on the
// parameter (_apply_weight_decay: w -= w * weight_decay * lr, every trainable parameter).

// d/dw of l1 |w| + l2 w^2 (keras.regularizers.L1L2): TensorFlow's gradients of abs (sign, 0 at 0)
// and of square (2w).
MF_HD float regularizer_grad(float w, float l1, float l2) {
  const float sign = w > 0.f ? 1.f : w < 0.f ? -1.f : 0.f;
  return l1 * sign + l2 * (w * 2.f);
}
MF_HD float regularizer_penalty(float w, float l1, float l2) {
  return l1 * fabsf(w) + l2 * (w * w);
}

// A gradient clipped: by its tensor's L2 norm (clipnorm: g c / max(norm, c), tf.clip_by_norm), by
// the scale of the global norm (global_clipnorm: clip_by_global_norm's c min(1/norm, 1/c), NaN when
// the norm is not finite), or to [-c, c] (clipvalue). `norm` is the tensor's or the global one.
MF_HD float clipped(ClipKind kind, float g, float c, float norm) {
  switch (kind) {
    case ClipKind::norm:
      return g * c / fmaxf(norm, c);
    case ClipKind::global_norm:
      return g * (c * fminf(1.f / norm, 1.f / c) + (norm - norm));
    case ClipKind::value:
      return fminf(fmaxf(g, -c), c);
    default:
      return g;
  }
}

MF_HD void decay_weight(float& w, const OptimizerSettings& s, float lr) {
  if (s.weight_decay != 0.f) w -= w * s.weight_decay * lr;
}

// ---- The updates. `slot` holds the optimizer's per-parameter state (optimizer_slots()): slot[0],
// slot[1], slot[2], as each update names them.

// Constants of optimizer step t for every parameter, computed once per thread.
struct StepConstants {
  float lr = 0;
  float alpha = 0;                   // Adam: lr sqrt(1 - beta_2^t) / (1 - beta_1^t)
  float one_minus_beta_1_power = 0;  // Adamax: 1 - beta_1^t
  float u_t = 0, u_t_1 = 0;          // Nadam's momentum schedule at t and t + 1
  float u_product = 0, u_product_next = 0, one_minus_beta_2_power = 0;
};

// Nadam's momentum schedule: beta_1 (1 - 0.5 * 0.96^t) (keras/src/optimizers/nadam.py).
MF_HD float nadam_momentum(const OptimizerSettings& s, int64_t t) {
  return s.beta_1 * (1.f - 0.5f * powf(0.96f, float(t)));
}
// Nadam's product of the schedule up to step t, from the product up to t - 1, as Keras updates its
// variable before the step: (u_product * beta_1) * (1 - 0.5 * 0.96^t).
MF_HD float nadam_product(const OptimizerSettings& s, float before, int64_t t) {
  return before * s.beta_1 * (1.f - 0.5f * powf(0.96f, float(t)));
}

// Each device thread computes them (t lives in device memory, so that a CUDA graph replays the
// step): on a GPU powf is CUDA's (within 2 ulp), so a power may differ from the CPU's in its last
// bits. `u_product_before` is Nadam's product up to step t - 1 (1 before the first step).
MF_HD StepConstants step_constants(OptimizerKind kind, const OptimizerSettings& s, int64_t t,
                                   float u_product_before) {
  StepConstants c;
  c.lr = current_rate(s, t);
  const float step = float(t);
  switch (kind) {
    case OptimizerKind::adam:
    case OptimizerKind::adamw: {
      const float beta_1_power = powf(s.beta_1, step), beta_2_power = powf(s.beta_2, step);
      c.alpha = c.lr * sqrtf(1.f - beta_2_power) / (1.f - beta_1_power);
      break;
    }
    case OptimizerKind::adamax:
      c.one_minus_beta_1_power = 1.f - powf(s.beta_1, step);
      break;
    case OptimizerKind::nadam:
      c.u_t = nadam_momentum(s, t);
      c.u_t_1 = nadam_momentum(s, t + 1);
      c.u_product = nadam_product(s, u_product_before, t);
      c.u_product_next = c.u_product * c.u_t_1;
      c.one_minus_beta_2_power = 1.f - powf(s.beta_2, step);
      break;
    default:
      break;
  }
  return c;
}

// One parameter's update by the optimizer `kind`, with its (clipped) gradient g. `amsgrad` (Adam,
// AdamW) and whether SGD and RMSprop keep a momentum slot are the pack's, so they are arguments.
MF_HD void optimizer_update(OptimizerKind kind, float& w, float* const slot[3], int64_t i, float g,
                            const OptimizerSettings& s, const StepConstants& c, bool momentum_slot,
                            bool amsgrad) {
  switch (kind) {
    case OptimizerKind::sgd: {
      if (!momentum_slot) {
        w -= g * c.lr;
        return;
      }
      float& m = slot[0][i];
      m = m * s.momentum - g * c.lr;
      w += s.nesterov ? m * s.momentum - g * c.lr : m;  // Nesterov: the look-ahead step
      return;
    }
    case OptimizerKind::adam:
    case OptimizerKind::adamw: {
      float &m = slot[0][i], &v = slot[1][i];
      m += (g - m) * s.one_minus_beta_1;
      v += (g * g - v) * s.one_minus_beta_2;
      float denominator = v;
      if (amsgrad) {
        float& v_hat = slot[2][i];
        v_hat = fmaxf(v_hat, v);
        denominator = v_hat;
      }
      w -= m * c.alpha / (sqrtf(denominator) + s.epsilon);
      return;
    }
    case OptimizerKind::rmsprop: {
      float& velocity = slot[0][i];
      velocity = s.rho * velocity + s.one_minus_rho * (g * g);
      float denominator = velocity + s.epsilon;
      if (s.centered) {
        float& average = slot[momentum_slot ? 2 : 1][i];
        average = s.rho * average + s.one_minus_rho * g;
        denominator = velocity - average * average + s.epsilon;
      }
      const float increment = c.lr * g / sqrtf(denominator);
      if (!momentum_slot) {
        w -= increment;
        return;
      }
      float& m = slot[1][i];
      m = s.momentum * m + increment;
      w -= m;
      return;
    }
    case OptimizerKind::adagrad: {
      float& accumulator = slot[0][i];
      accumulator += g * g;
      w -= c.lr * g / sqrtf(accumulator + s.epsilon);
      return;
    }
    case OptimizerKind::adamax: {
      float &m = slot[0][i], &u = slot[1][i];
      m += (g - m) * s.one_minus_beta_1;
      u = fmaxf(s.beta_2 * u, fabsf(g));
      w -= c.lr * m / (c.one_minus_beta_1_power * (u + s.epsilon));
      return;
    }
    case OptimizerKind::nadam: {
      float &m = slot[0][i], &v = slot[1][i];
      m += (g - m) * s.one_minus_beta_1;
      v += (g * g - v) * s.one_minus_beta_2;
      const float m_hat =
          c.u_t_1 * m / (1.f - c.u_product_next) + (1.f - c.u_t) * g / (1.f - c.u_product);
      const float v_hat = v / c.one_minus_beta_2_power;
      w -= m_hat * c.lr / (sqrtf(v_hat) + s.epsilon);
      return;
    }
    case OptimizerKind::lion: {  // Chen et al., 2023: the sign of an interpolated momentum
      float& m = slot[0][i];
      const float u = m * s.beta_1 + g * s.one_minus_beta_1;
      w -= c.lr * (u > 0.f ? 1.f : u < 0.f ? -1.f : 0.f);
      m = m * s.beta_2 + g * s.one_minus_beta_2;
      return;
    }
  }
}

}  // namespace mf
