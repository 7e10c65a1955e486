#include "nn/sweep.h"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <unordered_map>
#include <utility>

#include "nn/callbacks.h"
#include "nn/sweep_axes.h"
#include "nn/sweep_search.h"
#include "runtime/error.h"
#include "runtime/json_field.h"
#include "runtime/near_miss.h"
#include "runtime/names.h"

namespace mf {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A bound against a grid typed wrong (three axes of a thousand values): every model costs the
// runner a job, a report and a journal line, about 10 KiB, so 2^20 models are about 10 GiB before
// any trains.
constexpr size_t kMaxModels = size_t(1) << 20;

constexpr const char* kTopKeys[] = {"name", "base", "models", "grid", "search", "scheduler"};

const std::string kTopKeyList = join(kTopKeys);
std::string join_names(const std::vector<std::string>& names) {
  return joined(names, [](const std::string& name) { return name; });
}

// "unknown axis", with the one of `known` it was likely meant to be: "unknown axis (did you mean
// \"epochs\"?)".
std::string unknown(const char* what, const std::string& word,
                    const std::vector<std::string>& known) {
  return std::string("unknown ") + what + did_you_mean(word, known);
}

[[noreturn]] void fail(const std::string& file, const std::string& where,
                       const std::string& problem, const std::string& allowed) {
  throw UserError(file + ": " + where + ": " + problem + "; " + allowed);
}

// The name key of a JSON object when it is one a spec accepts, else "".
std::string name_in(const json& spec) {
  const auto it = spec.is_object() ? spec.find("name") : spec.end();
  if (it == spec.end() || !it->is_string()) return "";
  const std::string& name = it->get_ref<const std::string&>();
  return printable(name) ? name : "";
}

// One model from its JSON: parsed, or the parser's error kept. A spec without a name takes
// `fallback`, so that every model, bad or good, has one to be reported by.
SweepEntry parse_entry(json spec, const std::string& source, const std::string& fallback) {
  if (spec.is_object() && !spec.contains("name")) spec["name"] = fallback;
  SweepEntry entry;
  try {
    entry.spec = parse_model_spec(spec, source);
    entry.name = entry.spec->name;
  } catch (const UserError& e) {
    entry.error = e.what();
    entry.name = name_in(spec).empty() ? fallback : name_in(spec);
  }
  return entry;
}

// When every model of a grid fails with the same problem, no axis value made it differ (it is the
// base's, or a one-valued axis's): a UserError for the file, said once rather than once per model.
void refuse_a_bad_base(const std::string& path, const std::vector<SweepEntry>& models,
                       const std::vector<std::string>& labels, const char* what) {
  std::string problem;
  for (size_t i = 0; i < models.size(); ++i) {
    const std::string prefix = path + " " + labels[i] + ": ";
    if (models[i].error.rfind(prefix, 0) != 0) return;  // ok, or an error of another form
    const std::string own = models[i].error.substr(prefix.size());
    if (i > 0 && own != problem) return;
    problem = own;
  }
  if (models.size() > 1)
    throw UserError(path + ": all " + std::to_string(models.size()) + " models of the " + what +
                    ": " + problem);
}

// ---- Grid and search ------------------------------------------------------------------

// The base a grid or a search varies, checked, and the name it gives its models (its own, else the
// sweep's): the base's name is replaced by each model's, so its error would be lost.
const json& base_of(const std::string& path, const json& root, const std::string& sweep_name,
                    std::string* base_name) {
  const auto base = root.find("base");
  if (base == root.end())
    fail(path, "base", "missing", "a grid or a search varies a base spec: give one");
  if (!base->is_object())
    fail(path, "base", "got " + shown_escaped(*base), "expected a model spec (an object)");
  *base_name = sweep_name;
  if (base->contains("name")) {
    *base_name = name_in(*base);
    if (base_name->empty())
      fail(path, "base.name", "got " + shown_escaped(base->at("name")),
           "expected a non-empty string of printable characters");
  }
  return *base;
}

// A model of the base with `values` (axis -> value) set, in the axes' order: its name is the base's
// name and `name_suffix` (a grid's parts; "" for a search's, which names by trial number).
SweepEntry varied_model(const std::string& path, const json& base, const json& values,
                        std::string name, std::vector<std::string>& labels,
                        const std::string& place) {
  json spec = base;
  std::vector<std::string> set;  // "units 64" for each axis the model sets
  for (const SweepAxis& axis : sweep_axes()) {
    const auto value = values.find(axis.key);
    if (value == values.end()) continue;
    apply_axis(spec, axis.key, *value);
    set.push_back(std::string(axis.key) + " " + axis_value_text(*value));
  }
  spec["name"] = name;
  labels.push_back(place + " (" + joined(set) + ")");
  SweepEntry entry = parse_entry(std::move(spec), path + " " + labels.back(), name);
  entry.values = values;
  return entry;
}

// The models of a grid; `labels` gets each one's place for messages, like "grid (seed 1, epochs
// 2)".
std::vector<SweepEntry> grid_models(const std::string& path, const json& root,
                                    const std::string& sweep_name,
                                    std::vector<std::string>& labels) {
  std::string base_name;
  const json& base = base_of(path, root, sweep_name, &base_name);
  const json& grid = root.at("grid");
  if (!grid.is_object() || grid.empty())
    fail(path, "grid", "got " + shown_escaped(grid),
         "expected an object of one or more axes: " + sweep_axis_list());
  std::vector<std::string> axis_names;
  for (const SweepAxis& a : sweep_axes()) axis_names.push_back(a.key);
  for (const auto& [key, values] : grid.items()) {
    const std::string where = "grid." + one_line(key);
    if (!find_sweep_axis(key))
      fail(path, where, unknown("axis", key, axis_names), "allowed axes: " + sweep_axis_list());
    if (!values.is_array() || values.empty())
      fail(path, where, "got " + shown_escaped(values), "expected a non-empty array of values");
    if (const std::string problem = axis_needs(key, base); !problem.empty())
      fail(path, where, problem, "or leave this axis out");
    // each value becomes layers: a shape the parser cannot name once rewritten
    if (key == "hidden")
      for (size_t i = 0; i < values.size(); ++i)
        if (!values[i].is_array())
          fail(path, where + "[" + std::to_string(i) + "]", "got " + shown_escaped(values[i]),
               "expected an array of the hidden layers' widths, like [100, 10]");
  }

  // The axes present, in the fixed order, and how many models their product makes.
  std::vector<std::pair<const SweepAxis*, const json*>> axes;
  size_t total = 1;
  for (const SweepAxis& axis : sweep_axes()) {
    if (!grid.contains(axis.key)) continue;
    axes.emplace_back(&axis, &grid[axis.key]);
    total *= axes.back().second->size();  // cannot overflow: total <= 2^20 before, a size < 2^24
    if (total > kMaxModels)
      fail(path, "grid", "the axes make more than " + std::to_string(kMaxModels) + " models",
           "a sweep holds at most " + std::to_string(kMaxModels));
  }

  std::vector<SweepEntry> models;
  for (size_t index = 0; index < total; ++index) {
    json values = json::object();
    std::string name = base_name;
    size_t stride = total;  // the first axis varies slowest
    for (const auto& [axis, axis_values] : axes) {
      stride /= axis_values->size();
      const json& value = (*axis_values)[index / stride % axis_values->size()];
      values[axis->key] = value;
      name += "-" + axis_name_part(*axis, value);
    }
    models.push_back(varied_model(path, base, values, name, labels, "grid"));
  }
  refuse_a_bad_base(path, models, labels, "grid");
  return models;
}

// The trials of a search (nn/sweep_search.h), named by their number: "<base>-t007".
std::vector<SweepEntry> search_models(const std::string& path, const json& root,
                                      const std::string& sweep_name,
                                      std::vector<std::string>& labels) {
  std::string base_name;
  const json& base = base_of(path, root, sweep_name, &base_name);
  const std::vector<json> trials = draw_trials(path, root.at("search"), base);
  const size_t digits = std::to_string(trials.size() - 1).size();
  std::vector<SweepEntry> models;
  for (size_t t = 0; t < trials.size(); ++t) {
    std::string number = std::to_string(t);
    number.insert(0, digits - number.size(), '0');
    models.push_back(varied_model(path, base, trials[t], base_name + "-t" + number, labels,
                                  "search trial " + std::to_string(t)));
  }
  refuse_a_bad_base(path, models, labels, "search");
  return models;
}

// ---- List ---------------------------------------------------------------------------

// The models of a list; `labels` gets each one's place for messages, like "models[2]".
std::vector<SweepEntry> list_models(const std::string& path, const json& root,
                                    const std::string& sweep_name,
                                    std::vector<std::string>& labels) {
  const json& list = root.at("models");
  if (!list.is_array() || list.empty())
    fail(path, "models", "got " + shown_escaped(list),
         "expected a non-empty array of model specs or spec file paths");
  if (list.size() > kMaxModels)
    fail(path, "models", std::to_string(list.size()) + " models",
         "a sweep holds at most " + std::to_string(kMaxModels));
  const json* base = nullptr;
  if (const auto it = root.find("base"); it != root.end()) {
    if (!it->is_object())
      fail(path, "base", "got " + shown_escaped(*it),
           "expected a model spec (an object) to merge each model over");
    base = &*it;
  }

  const fs::path folder = fs::path(path).parent_path();
  std::vector<SweepEntry> models;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& item = list[i];
    labels.push_back("models[" + std::to_string(i) + "]");
    const std::string label = path + " " + labels.back();
    std::string fallback = sweep_name + "-" + std::to_string(i), source = label;
    json spec;
    if (item.is_string()) {
      const fs::path file = folder / item.get<std::string>();
      source = label + ": " + file.string();
      if (!file.stem().empty()) fallback = one_line(file.stem().string());
      try {
        spec = read_json_file(file.string(), "spec");
      } catch (const UserError& e) {
        models.push_back({fallback, std::nullopt, label + ": " + e.what()});
        continue;
      }
    } else if (item.is_object()) {
      spec = item;
    } else {
      models.push_back({fallback, std::nullopt,
                        label + ": got " + shown_escaped(item) +
                            "; expected a model spec (an object) or the path of a spec file"});
      continue;
    }
    if (base) {
      json merged = *base;
      merged.merge_patch(spec);
      spec = std::move(merged);
    }
    models.push_back(parse_entry(std::move(spec), source, fallback));
  }
  return models;
}

// Results and weights are reported by the model's name: a later model with an earlier one's is
// refused.
void refuse_repeated_names(const std::string& path, std::vector<SweepEntry>& models,
                           const std::vector<std::string>& labels) {
  std::unordered_map<std::string, size_t> first;
  for (size_t i = 0; i < models.size(); ++i) {
    const auto [earlier, added] = first.emplace(models[i].name, i);
    if (added || !models[i].error.empty()) continue;
    models[i].spec.reset();
    models[i].error = path + " " + labels[i] + ": the name '" + models[i].name + "' is also " +
                      labels[earlier->second] + "'s; give each model its own name";
  }
}

// The scheduler against the models: its metric is one every model reports, its "auto" mode by
// Keras's rule for that metric, and its max_epochs every model's epochs (the file's), else the
// largest model's.
void resolve_scheduler(const std::string& path, Sweep& sweep, std::optional<int> max_epochs) {
  SchedulerSpec& s = *sweep.scheduler;
  for (const SweepEntry& model : sweep.models) {
    if (!model.spec) continue;
    if (max_epochs && model.values.contains("epochs"))
      fail(path, "scheduler.max_epochs", "the epochs axis sets the models' epochs too",
           "leave max_epochs out (the largest model's epochs is the default) or the epochs axis");
    const ModelSpec& spec = *model.spec;
    const std::string name = s.metric.rfind("val_", 0) == 0 ? s.metric.substr(4) : s.metric;
    std::vector<std::string> known{"loss", "val_loss"};
    for (const MetricSpec& m : spec.metric_list())
      known.push_back(m.name), known.push_back("val_" + m.name);
    if (std::find(known.begin(), known.end(), s.metric) == known.end()) {
      fail(path, "scheduler.metric",
           "model " + model.name + " reports no \"" + one_line(s.metric) + "\"" +
               did_you_mean(s.metric, known),
           "allowed for it: " + join_names(known));
    }
    if (name != s.metric && spec.fit.validation_split <= 0)
      fail(path, "scheduler.metric",
           s.metric + " needs validation rows, and model " + model.name + " has none",
           "set fit.validation_split in the base (0.2 is Keras's usual), or schedule on \"" + name +
               "\"");
    s.maximize = s.mode == MonitorMode::max ||
                 (s.mode == MonitorMode::automatic &&
                  Improvement(spec, s.metric, MonitorMode::automatic, 0).maximizes());
  }
  for (SweepEntry& model : sweep.models)
    if (model.spec && max_epochs) model.spec->fit.epochs = *max_epochs;
  s.max_epochs = 0;
  for (const SweepEntry& model : sweep.models)
    if (model.spec) s.max_epochs = std::max(s.max_epochs, model.spec->fit.epochs);
  if (s.max_epochs > 0 && s.rungs(0).empty())
    fail(path, "scheduler",
         "no rung falls under the models' epochs (" + std::to_string(s.max_epochs) +
             "; the first is at grace_epochs, " + std::to_string(s.grace_epochs) + ")",
         "lower grace_epochs, or train more epochs (max_epochs or the base's fit.epochs)");
}

}  // namespace

Sweep load_sweep(const std::string& path) {
  const json root = read_json_file(path, "sweep file");
  if (!root.is_object())
    fail(path, "top level", "got " + shown_escaped(root),
         "expected a sweep (an object with \"models\" or \"grid\") or a model spec");
  const std::string stem = one_line(fs::path(path).stem().string());
  Sweep sweep;
  if (root.contains("layers")) {  // a plain spec: its errors read as load_model_spec's
    sweep.models.push_back(parse_entry(root, path, stem));
    sweep.name = sweep.models[0].name;
    return sweep;
  }

  for (const auto& entry : root.items())
    if (std::find(std::begin(kTopKeys), std::end(kTopKeys), entry.key()) == std::end(kTopKeys))
      fail(path, one_line(entry.key()),
           unknown("key", entry.key(), {std::begin(kTopKeys), std::end(kTopKeys)}),
           "allowed keys: " + kTopKeyList + " (or a model spec, with its layers)");
  sweep.name = stem;
  if (const auto name = root.find("name"); name != root.end()) {
    sweep.name = name_in(root);
    if (sweep.name.empty())
      fail(path, "name", "got " + shown_escaped(*name),
           "expected a non-empty string of printable characters");
  }
  const int forms =
      int(root.contains("models")) + int(root.contains("grid")) + int(root.contains("search"));
  if (forms != 1)
    fail(
        path, "top level",
        forms == 0 ? "no \"models\", \"grid\" or \"search\""
                   : "more than one of \"models\", \"grid\" and \"search\"",
        "expected one: a list of models, a grid of axes over a base spec, or a search of trials over one");
  std::optional<int> max_epochs;
  if (const auto scheduler = root.find("scheduler"); scheduler != root.end())
    sweep.scheduler = parse_scheduler(path, *scheduler, &max_epochs);

  std::vector<std::string> labels;
  sweep.models = root.contains("models") ? list_models(path, root, sweep.name, labels)
                 : root.contains("grid") ? grid_models(path, root, sweep.name, labels)
                                         : search_models(path, root, sweep.name, labels);
  refuse_repeated_names(path, sweep.models, labels);
  if (sweep.scheduler) resolve_scheduler(path, sweep, max_epochs);
  return sweep;
}

}  // namespace mf
