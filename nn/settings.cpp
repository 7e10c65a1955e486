#include "nn/settings.h"

#include <algorithm>

namespace mf {

Schedule schedule_settings(const ScheduleSpec& s) {
  Schedule out;
  out.kind = s.kind;
  out.initial = float(s.initial_learning_rate);
  out.decay_steps = float(s.decay_steps);
  out.decay_rate = float(s.decay_rate);
  out.staircase = s.staircase;
  out.alpha = float(s.alpha), out.one_minus_alpha = float(1.0 - s.alpha);
  out.warmup = s.warmup_target.has_value();
  out.warmup_target = float(s.warmup_target.value_or(0)), out.warmup_steps = float(s.warmup_steps);
  out.end = float(s.end_learning_rate), out.power = float(s.power);
  out.cycle = s.cycle;
  out.boundaries = int(s.boundaries.size());
  for (size_t i = 0; i < s.boundaries.size(); ++i) out.boundary[i] = s.boundaries[i];
  for (size_t i = 0; i < s.values.size(); ++i) out.value[i] = float(s.values[i]);
  return out;
}

MemberSettings member_settings(const ModelSpec& spec) {
  MemberSettings s;
  s.seed = spec.seed;
  const OptimizerSpec& p = spec.optimizer;
  OptimizerSettings& o = s.optimizer;
  o.learning_rate = p.learning_rate;
  if (p.schedule) o.schedule = schedule_settings(*p.schedule);
  o.beta_1 = float(p.beta_1), o.beta_2 = float(p.beta_2);
  if (optimizer_traits(p.kind).float32_betas) {
    o.one_minus_beta_1 = 1.f - o.beta_1, o.one_minus_beta_2 = 1.f - o.beta_2;
  } else {
    o.one_minus_beta_1 = float(1.0 - p.beta_1), o.one_minus_beta_2 = float(1.0 - p.beta_2);
  }
  o.epsilon = p.epsilon;
  o.momentum = p.momentum;
  o.rho = float(p.rho), o.one_minus_rho = float(1.0 - p.rho);
  o.nesterov = p.nesterov, o.centered = p.centered;
  o.weight_decay = p.weight_decay;
  o.clip = p.clip_value;
  const LossSpec& l = spec.loss;
  s.loss.label_smoothing = float(l.label_smoothing);
  s.loss.one_minus_label_smoothing = float(1.0 - l.label_smoothing);
  s.loss.half_label_smoothing = float(0.5 * l.label_smoothing);
  s.loss.delta = float(l.delta);
  return s;
}

std::vector<LayerSettings> layer_settings(const ModelSpec& spec) {
  std::vector<LayerSettings> out;
  for (const LayerSpec& l : spec.layers) {
    LayerSettings s;
    if (l.kind == LayerKind::dropout) {
      s.dropout_rate = float(l.rate);
      // tf.nn.dropout: 1 / keep_prob in Python, then float32
      s.dropout_scale = float(1.0 / (1.0 - l.rate));
    }
    if (l.kind == LayerKind::batch_normalization) {
      s.momentum = float(l.momentum), s.one_minus_momentum = float(1.0 - l.momentum),
      s.epsilon = float(l.epsilon);
    }
    s.kernel = l.kernel_regularizer, s.bias = l.bias_regularizer,
    s.activity = l.activity_regularizer;
    out.push_back(s);
  }
  return out;
}

bool momentum_slot(const OptimizerSpec& o) {
  return (o.kind == OptimizerKind::sgd || o.kind == OptimizerKind::rmsprop) && o.momentum > 0;
}

std::vector<const char*> optimizer_slots(const OptimizerSpec& o) {
  std::vector<const char*> slots;
  for (const char* slot : optimizer_traits(o.kind).slots)
    if (slot) slots.push_back(slot);
  // the settings that keep state of their own (the parser takes each for its optimizers alone)
  if (o.amsgrad) slots.push_back("adam v_hat");
  if (momentum_slot(o))
    slots.push_back(o.kind == OptimizerKind::sgd ? "sgd velocity" : "rmsprop momentum");
  if (o.centered) slots.push_back("rmsprop average gradient");
  return slots;
}

std::vector<ParamTensor> param_tensors(const ModelSpec& spec) {
  std::vector<ParamTensor> tensors;
  int64_t at = 0;
  int block = 0;
  const auto add = [&](int layer, TensorRole role, int64_t count) {
    tensors.push_back({at, count, layer, role, block});
    at += count;
    block += param_blocks(count);
  };
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec& l = spec.layers[i];
    const int in = i == 0 ? spec.input : spec.width(i - 1);
    if (l.kind == LayerKind::dense) {
      add(int(i), TensorRole::kernel, int64_t(in) * l.units);
      if (l.use_bias) add(int(i), TensorRole::bias, l.units);
    } else if (l.kind == LayerKind::batch_normalization) {
      if (l.scale) add(int(i), TensorRole::gamma, in);
      if (l.center) add(int(i), TensorRole::beta, in);
    }
  }
  return tensors;
}

bool weight_regularized(const ModelSpec& spec) {
  return std::any_of(spec.layers.begin(), spec.layers.end(), [](const LayerSpec& l) {
    return l.kind == LayerKind::dense && (l.kernel_regularizer.any() || l.bias_regularizer.any());
  });
}

}  // namespace mf
