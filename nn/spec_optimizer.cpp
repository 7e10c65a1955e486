// A spec's optimizer: Keras 3's SGD, Adam, AdamW, RMSprop, Adagrad, Adamax, Nadam and Lion with
// their keyword arguments and defaults, the base optimizer's weight_decay and clipping, and a
// learning-rate schedule in learning_rate (keras.optimizers.schedules).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "nn/spec_parts.h"
#include "runtime/names.h"

namespace mf {
namespace {

using nlohmann::json;

// Every optimizer's settings beside these (keras/src/optimizers/base_optimizer.py).
constexpr const char* kCommonKeys[] = {"learning_rate", "weight_decay", "clipnorm", "clipvalue",
                                       "global_clipnorm"};
// ClipKind's order, from 1
constexpr const char* kClipKeys[] = {"clipnorm", "global_clipnorm", "clipvalue"};

// Optimizer `kind`'s own settings (kernels/optimizer_math.h's kOptimizerTraits).
std::vector<const char*> own_keys(OptimizerKind kind) {
  return listed(optimizer_traits(kind).keys);
}

constexpr KerasDefault kOptimizerDefaults[] = {
    {"use_ema", "false", "multifit keeps no moving average of the weights"},
    {"ema_overwrite_frequency", "null", "multifit keeps no moving average of the weights"},
    {"loss_scale_factor", "null", "multifit trains in float32, unscaled"},
    {"gradient_accumulation_steps", "null", "multifit updates the weights every step"},
};

bool has(const std::vector<const char*>& keys, const std::string& key) {
  return std::any_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; });
}

// A beta, rho or momentum as written (0.999, not 0.999f): Keras takes 1 - it in double.
double parse_fraction(const Field& field) {
  field.fraction();  // the rule: [0, 1)
  return field.value().get<double>();
}

double positive(const Field& field) {
  return field.number_in(0, 1e30, "a finite number > 0", true);
}

int64_t positive_steps(const Field& field) {
  if (const auto n = integer_in(field.value(), 1, uint64_t(1) << 53)) return int64_t(*n);
  field.wrong("a positive whole number of optimizer steps");
}

ScheduleSpec parse_schedule(const Field& field) {
  const KerasObject object(field, "name", "learning-rate schedule");
  if (!object.settings())
    object.kind_field().fail("a schedule without its settings", "give them in its config");
  ScheduleSpec s;
  s.kind = object.one_of(kScheduleNames);
  object.allow(listed(schedule_traits(s.kind).keys));
  const Field& settings = *object.settings();
  const auto flag = [&](const char* key) {
    const auto f = object.setting(key);
    return f && f->boolean();
  };
  switch (s.kind) {
    case ScheduleKind::exponential_decay:
    case ScheduleKind::inverse_time_decay:
      s.decay_rate = settings.at("decay_rate").number_in(0, 1e30, "a finite number >= 0");
      s.staircase = flag("staircase");
      break;
    case ScheduleKind::cosine_decay:
      if (const auto f = object.setting("alpha"))
        s.alpha = f->number_in(0, 1, "a number in [0, 1]");
      if (const auto f = object.setting("warmup_target"); f && !f->value().is_null())
        s.warmup_target = positive(*f);
      if (const auto f = object.setting("warmup_steps")) s.warmup_steps = int64_t(f->count());
      break;
    case ScheduleKind::polynomial_decay:
      if (const auto f = object.setting("end_learning_rate"))
        s.end_learning_rate = f->number_in(0, 1e30, "a finite number >= 0");
      if (const auto f = object.setting("power"))
        s.power = f->number_in(0, 1e30, "a finite number >= 0");
      s.cycle = flag("cycle");
      break;
    case ScheduleKind::piecewise_constant_decay: {
      const Field boundaries = settings.at("boundaries"), values = settings.at("values");
      const std::string expected = "an increasing array of 1 to " + std::to_string(kMaxBoundaries) +
                                   " optimizer steps (whole numbers >= 0)";
      if (!boundaries.value().is_array() || boundaries.value().empty() ||
          boundaries.value().size() > kMaxBoundaries)
        boundaries.wrong(expected);
      for (size_t i = 0; i < boundaries.value().size(); ++i) {
        const auto step = integer_in(boundaries.value()[i], 0, uint64_t(1) << 53);
        if (!step || (i > 0 && int64_t(*step) <= s.boundaries.back()))
          boundaries.item(i).wrong(expected);
        s.boundaries.push_back(int64_t(*step));
      }
      if (!values.value().is_array() || values.value().size() != s.boundaries.size() + 1)
        values.wrong("an array of " + std::to_string(s.boundaries.size() + 1) +
                     " learning rates, one more than the boundaries");
      for (size_t i = 0; i < values.value().size(); ++i)
        s.values.push_back(positive(values.item(i)));
      s.initial_learning_rate = s.values.front();
      return s;
    }
    default:
      break;  // constant: not a schedule Keras names
  }
  const Field initial = settings.at("initial_learning_rate");
  if (s.warmup_target)  // CosineDecay(0.0, ..., warmup_target=...): Keras's warm-up from nothing
    s.initial_learning_rate = initial.number_in(0, 1e30, "a finite number >= 0");
  else if (s.kind == ScheduleKind::cosine_decay)
    s.initial_learning_rate = initial.number_in(
        0, 1e30, "a finite number > 0 (0 only where a warm-up starts from it: with warmup_target)",
        true);
  else
    s.initial_learning_rate = positive(initial);
  s.decay_steps = positive_steps(settings.at("decay_steps"));
  return s;
}

json schedule_to_json(const ScheduleSpec& s) {
  json config;
  switch (s.kind) {
    case ScheduleKind::exponential_decay:
    case ScheduleKind::inverse_time_decay:
      config = {{"decay_rate", s.decay_rate}, {"staircase", s.staircase}};
      break;
    case ScheduleKind::cosine_decay:
      config = {{"alpha", s.alpha}, {"warmup_steps", s.warmup_steps}};
      if (s.warmup_target) config["warmup_target"] = *s.warmup_target;
      break;
    case ScheduleKind::polynomial_decay:
      config = {{"end_learning_rate", s.end_learning_rate}, {"power", s.power}, {"cycle", s.cycle}};
      break;
    case ScheduleKind::piecewise_constant_decay:
      return {{"class_name", class_of(kScheduleNames, s.kind)},
              {"config", {{"boundaries", s.boundaries}, {"values", s.values}}}};
    default:
      break;
  }
  config["initial_learning_rate"] = s.initial_learning_rate;
  config["decay_steps"] = s.decay_steps;
  return {{"class_name", class_of(kScheduleNames, s.kind)}, {"config", config}};
}

// An optimizer's own setting `key` (one of kOptimizerTraits' keys), as the spec holds it.
json setting_to_json(const OptimizerSpec& o, std::string_view key) {
  if (key == "beta_1") return o.beta_1;
  if (key == "beta_2") return o.beta_2;
  if (key == "epsilon") return number(o.epsilon);
  if (key == "amsgrad") return o.amsgrad;
  if (key == "momentum") return number(o.momentum);
  if (key == "nesterov") return o.nesterov;
  if (key == "rho") return o.rho;
  if (key == "centered") return o.centered;
  if (key == "initial_accumulator_value") return number(o.initial_accumulator_value);
  throw std::logic_error("optimizer setting " + std::string(key) + " has no field");
}

}  // namespace

const char* keras_class(OptimizerKind kind) { return class_of(kOptimizerNames, kind); }

OptimizerSpec parse_optimizer(const Field& field) {
  const KerasObject object(field, "name", "optimizer");
  OptimizerSpec o;
  o.kind = object.one_of(kOptimizerNames);
  const OptimizerTraits& defaults = optimizer_traits(o.kind);
  o.learning_rate = defaults.learning_rate;
  o.weight_decay = defaults.weight_decay;
  o.beta_2 = defaults.beta_2;
  const std::vector<const char*> own = own_keys(o.kind);
  // A setting of another optimizer would be silently ignored; say which ones take it.
  if (object.settings())
    for (const auto& entry : object.settings()->value().items()) {
      if (has(own, entry.key())) continue;
      std::vector<std::string> takers;
      for (const OptimizerTraits& other : kOptimizerTraits)
        if (has(own_keys(other.kind), entry.key())) takers.push_back(to_string(other.kind));
      if (!takers.empty())
        object.setting(entry.key())
            ->fail("only for " + joined(takers), std::string(to_string(o.kind)) + " takes " +
                                                     join(std::vector<const char*>(own)) + " and " +
                                                     join(kCommonKeys));
    }
  std::vector<const char*> keys(std::begin(kCommonKeys), std::end(kCommonKeys));
  keys.insert(keys.end(), own.begin(), own.end());
  std::vector<const char*> ignored = check_defaults(object, kOptimizerDefaults);
  ignored.push_back("ema_momentum");  // used with use_ema alone
  object.allow(keys, ignored);

  if (const auto f = object.setting("learning_rate")) {
    if (f->value().is_object()) {
      o.schedule = parse_schedule(*f);
      o.learning_rate = float(o.schedule->initial_learning_rate);
    } else {
      o.learning_rate = f->positive_number();
    }
  }
  if (const auto f = object.setting("beta_1"))  // Lion's may be 1, not 0 (sign SGD)
    o.beta_1 = o.kind == OptimizerKind::lion
                   ? f->number_in(0, 1, "a number in (0, 1]: at 0 Lion is sign SGD", true)
                   : parse_fraction(*f);
  if (const auto f = object.setting("beta_2")) o.beta_2 = parse_fraction(*f);
  if (const auto f = object.setting("epsilon")) o.epsilon = f->positive_number();
  if (const auto f = object.setting("amsgrad")) o.amsgrad = f->boolean();
  if (const auto f = object.setting("momentum")) o.momentum = f->fraction();
  if (const auto f = object.setting("nesterov")) o.nesterov = f->boolean();
  if (const auto f = object.setting("rho")) o.rho = parse_fraction(*f);
  if (const auto f = object.setting("centered")) o.centered = f->boolean();
  if (const auto f = object.setting("initial_accumulator_value"))
    o.initial_accumulator_value = float(f->number_in(0, 1e30, "a finite number >= 0"));
  if (const auto f = object.setting("weight_decay")) {
    if (f->value().is_null() && o.kind == OptimizerKind::adamw)
      f->wrong("a number >= 0: AdamW's weight decay");
    o.weight_decay =
        f->value().is_null() ? 0.f : float(f->number_in(0, 1e30, "a finite number >= 0, or null"));
  }
  const char* clip_key = nullptr;
  for (size_t i = 0; i < std::size(kClipKeys); ++i) {
    const auto f = object.setting(kClipKeys[i]);
    if (!f || f->value().is_null()) continue;
    if (clip_key)
      f->fail(std::string("both ") + clip_key + " and " + kClipKeys[i],
              "Keras takes one of clipnorm, global_clipnorm and clipvalue");
    clip_key = kClipKeys[i];
    o.clip = ClipKind(i + 1);
    o.clip_value = f->positive_number();
  }
  return o;
}

std::string default_text(const json& value) {
  if (!value.is_number()) return value.dump();
  char out[32];
  std::snprintf(out, sizeof out, "%g", float(value.get<double>()));
  return out;
}

std::vector<std::string> schedule_entries() {
  std::vector<std::string> out;
  for (const ScheduleTraits& traits : kScheduleTraits) {
    ScheduleSpec defaults;
    defaults.kind = traits.kind;
    const json config = schedule_to_json(defaults)["config"];
    const std::vector<const char*> keys = listed(traits.keys);
    std::vector<std::string> settings;
    for (int i = 0; i < int(keys.size()); ++i) {
      std::string setting = keys[size_t(i)];
      if (i >= traits.required)  // append(): GCC 12 misreads " " + a temporary (-Wrestrict)
        setting.append(" ").append(default_text(config.value(keys[size_t(i)], json())));
      settings.push_back(setting);
    }
    out.push_back(std::string(class_of(kScheduleNames, traits.kind)) + " (" + joined(settings) +
                  ")");
  }
  return out;
}

std::vector<std::string> optimizer_entries() {
  const json adam = optimizer_to_json(parse_optimizer(Field(json{{"name", "adam"}}, "reference")));
  std::vector<std::string> out;
  for (const KerasName<OptimizerKind>& name : kOptimizerNames) {
    const json defaults =
        optimizer_to_json(parse_optimizer(Field(json{{"name", name.identifier}}, "reference")));
    std::vector<std::string> settings;
    for (const char* key : own_keys(name.value))
      settings.push_back(std::string(key) + " " + default_text(defaults[key]));
    for (const char* key : {"learning_rate", "weight_decay"})
      if (defaults.contains(key) && defaults[key] != adam.value(key, json()))
        settings.push_back(std::string(key) + " " + default_text(defaults[key]));
    out.push_back(std::string(name.identifier) +
                  (settings.empty() ? "" : " (" + joined(settings) + ")"));
  }
  return out;
}

json optimizer_to_json(const OptimizerSpec& o) {
  json out = {{"name", to_string(o.kind)}, {"learning_rate", number(o.learning_rate)}};
  if (o.schedule) out["learning_rate"] = schedule_to_json(*o.schedule);
  for (const char* key : own_keys(o.kind)) out[key] = setting_to_json(o, key);
  // where set, and always for an optimizer whose Keras default is a decay (AdamW's)
  if (o.weight_decay != 0.f || optimizer_traits(o.kind).weight_decay != 0.f)
    out["weight_decay"] = number(o.weight_decay);
  if (o.clip != ClipKind::none) out[kClipKeys[int(o.clip) - 1]] = number(o.clip_value);
  return out;
}

}  // namespace mf
