// A spec's fit callbacks: Keras 3's EarlyStopping and ReduceLROnPlateau with their keyword
// arguments and defaults (keras/src/callbacks/early_stopping.py, reduce_lr_on_plateau.py); the
// other Keras callbacks are refused, naming what multifit does instead.
#include <string>

#include "nn/spec_parts.h"

namespace mf {
namespace {

using nlohmann::json;

enum class CallbackKind { early_stopping, reduce_lr_on_plateau };
constexpr KerasName<CallbackKind> kCallbacks[] = {
    {nullptr, "EarlyStopping", CallbackKind::early_stopping},
    {nullptr, "ReduceLROnPlateau", CallbackKind::reduce_lr_on_plateau}};

struct Instead {
  const char* class_name;
  const char* instead;
};
constexpr Instead kInstead[] = {
    {"ModelCheckpoint",
     "multifit run --save-best K DIR keeps the best models' weights; train --save W the last"},
    {"CSVLogger", "--csv writes each model's row, and --json every epoch's metrics"},
    {"TensorBoard", "--trace writes each step and epoch as a Perfetto trace"},
    {"LearningRateScheduler",
     "give the optimizer a schedule in learning_rate (ExponentialDecay, CosineDecay, ...)"},
    {"TerminateOnNaN", "multifit stops a model whose loss is not finite: it ends diverged"},
    {"BackupAndRestore",
     "multifit run --journal and --resume take a killed run up where it stopped"},
    {"History", "every epoch's metrics are in the result document"},
    {"ProgbarLogger", "multifit prints each epoch's line (--quiet for none)"},
    {"LambdaCallback", "multifit runs no Python"},
    {"RemoteMonitor", "--json writes the results"},
    {"SwapEMAWeights", "multifit keeps no moving average of the weights"},
};

// Keras's verbose only prints; multifit reports the stop in the model's results.
constexpr const char* kVerbose[] = {"verbose"};

std::string parse_monitor(const KerasObject& object) {
  const auto f = object.setting("monitor");
  return f ? f->text() : "val_loss";
}

MonitorMode parse_mode(const KerasObject& object) {
  const auto f = object.setting("mode");
  return f ? f->one_of(kMonitorModeNames) : MonitorMode::automatic;
}

int count_of(const KerasObject& object, const char* key, int fallback) {
  const auto f = object.setting(key);
  return f ? f->count() : fallback;
}

double number_of(const KerasObject& object, const char* key, double fallback, double low = -1e300) {
  const auto f = object.setting(key);
  return f ? f->number_in(low, 1e300, low == 0 ? "a finite number >= 0" : "a finite number")
           : fallback;
}

EarlyStoppingSpec parse_early_stopping(const KerasObject& object) {
  object.allow(
      std::initializer_list<const char*>{"monitor", "min_delta", "patience", "mode", "baseline",
                                         "restore_best_weights", "start_from_epoch"},
      kVerbose);
  EarlyStoppingSpec e;
  e.monitor = parse_monitor(object);
  e.mode = parse_mode(object);
  e.min_delta = number_of(object, "min_delta", 0);
  e.patience = count_of(object, "patience", 0);
  if (const auto f = object.setting("baseline"); f && !f->value().is_null())
    e.baseline = f->number_in(-1e300, 1e300, "a finite number, or null");
  if (const auto f = object.setting("restore_best_weights")) e.restore_best_weights = f->boolean();
  e.start_from_epoch = count_of(object, "start_from_epoch", 0);
  return e;
}

ReduceLROnPlateauSpec parse_reduce_lr(const KerasObject& object) {
  object.allow(std::initializer_list<const char*>{"monitor", "factor", "patience", "mode",
                                                  "min_delta", "cooldown", "min_lr"},
               kVerbose);
  ReduceLROnPlateauSpec r;
  r.monitor = parse_monitor(object);
  r.mode = parse_mode(object);
  if (const auto f = object.setting("factor"))
    r.factor = f->number_in(0, 1, "a number in (0, 1): Keras refuses a factor >= 1", true);
  if (r.factor >= 1)
    object.setting("factor")->wrong("a number in (0, 1): Keras refuses a factor >= 1");
  r.patience = count_of(object, "patience", 10);
  r.min_delta = number_of(object, "min_delta", 1e-4);
  r.cooldown = count_of(object, "cooldown", 0);
  r.min_lr = number_of(object, "min_lr", 0, 0);
  return r;
}

json mode_json(MonitorMode mode) { return name_of(kMonitorModeNames, mode); }

}  // namespace

std::vector<CallbackField> parse_callbacks(const Field& field, FitSpec& fit) {
  if (!field.value().is_array())
    field.wrong("an array of callbacks, like [{\"type\": \"EarlyStopping\", \"patience\": 5}]");
  std::vector<CallbackField> fields;
  for (size_t i = 0; i < field.value().size(); ++i) {
    const Field item = field.item(i);
    item.require_object(
        "a callback: {\"type\": \"EarlyStopping\", ...} or {\"class_name\": ..., \"config\": {...}}");
    const KerasObject object(item, "type", "callback");
    for (const Instead& other : kInstead)
      if (object.kind() == other.class_name)
        object.kind_field().fail(
            object.kind() + " is not a callback multifit runs: " + other.instead,
            "multifit runs EarlyStopping and ReduceLROnPlateau");
    const CallbackKind kind = object.one_of(kCallbacks);
    const bool repeated = kind == CallbackKind::early_stopping
                              ? fit.early_stopping.has_value()
                              : fit.reduce_lr_on_plateau.has_value();
    if (repeated) object.kind_field().fail("a second " + object.kind(), "give each callback once");
    if (kind == CallbackKind::early_stopping)
      fit.early_stopping = parse_early_stopping(object);
    else
      fit.reduce_lr_on_plateau = parse_reduce_lr(object);
    const Field settings = object.settings() ? *object.settings() : item;
    fields.push_back({item, settings.at("monitor"), kind == CallbackKind::reduce_lr_on_plateau});
  }
  return fields;
}

json callbacks_to_json(const FitSpec& fit) {
  json out = json::array();
  if (const auto& e = fit.early_stopping) {
    json c = {{"type", "EarlyStopping"},
              {"monitor", e->monitor},
              {"min_delta", e->min_delta},
              {"patience", e->patience},
              {"mode", mode_json(e->mode)},
              {"restore_best_weights", e->restore_best_weights},
              {"start_from_epoch", e->start_from_epoch}};
    c["baseline"] = e->baseline ? json(*e->baseline) : json(nullptr);
    out.push_back(c);
  }
  if (const auto& r = fit.reduce_lr_on_plateau)
    out.push_back({{"type", "ReduceLROnPlateau"},
                   {"monitor", r->monitor},
                   {"factor", r->factor},
                   {"patience", r->patience},
                   {"mode", mode_json(r->mode)},
                   {"min_delta", r->min_delta},
                   {"cooldown", r->cooldown},
                   {"min_lr", r->min_lr}});
  return out;
}

}  // namespace mf
