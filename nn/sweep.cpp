#include "nn/sweep.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <unordered_map>
#include <utility>

#include "nn/keras_object.h"
#include "runtime/error.h"
#include "runtime/near_miss.h"

namespace mf {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A bound against a grid typed wrong (three axes of a thousand values): every model costs the runner a
// job, a report and a journal line, about 10 KiB, so 2^20 models are about 10 GiB before any trains.
constexpr size_t kMaxModels = size_t(1) << 20;

// The grid's axes in the order they combine (the first varies slowest) and name a model.
struct Axis {
  const char* key;
  const char* prefix;  // of the model's name part
};
constexpr Axis kAxes[] = {{"hidden", "h"},     {"activation", ""}, {"learning_rate", "lr"},
                          {"batch_size", "b"}, {"seed", "s"},      {"epochs", "e"}};
constexpr const char* kTopKeys[] = {"name", "base", "models", "grid"};

// "a, b, c" for a message, from the table the code reads, so the two never disagree.
template <class T, size_t N>
std::string join(const T (&items)[N], const char* (*key)(const T&)) {
  std::string out;
  for (const T& item : items) out += (out.empty() ? "" : ", ") + std::string(key(item));
  return out;
}
const std::string kAxisKeys = join<Axis>(kAxes, [](const Axis& a) { return a.key; });
const std::string kTopKeyList = join<const char*>(kTopKeys, [](const char* const& k) { return k; });

// JSON text that stays on one printable line: control characters and DEL escaped, bad UTF-8 replaced.
std::string escaped(const json& value) { return value.dump(-1, ' ', true, json::error_handler_t::replace); }

// A value for a message, escaped and cut short: a misplaced object could be arbitrarily large
// (runtime/json_field.h's shown() keeps non-ASCII text as it is; a sweep's names must stay printable).
std::string shown_escaped(const json& value) {
  constexpr size_t kMaxChars = 60;
  std::string text = escaped(value);
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

// Names are printed in every line about their model: the spec parser refuses control characters.
bool printable(const std::string& text) {
  return std::none_of(text.begin(), text.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

// A string for a name or a message: as it is when printable, else with its control characters escaped.
std::string one_line(const std::string& text) {
  if (printable(text)) return text;
  const std::string quoted = escaped(json(text));
  return quoted.substr(1, quoted.size() - 2);
}

// A grid value as a name part or a label: a string bare, a float in its shortest form that reads
// back the same (std::to_chars: 0.001, not 0.0010000000000000000208), anything else as JSON.
std::string value_text(const json& value) {
  if (value.is_string()) return one_line(value.get<std::string>());
  if (value.is_number_float()) {
    char buffer[32];
    const std::to_chars_result end =
        std::to_chars(buffer, buffer + sizeof buffer, value.get<double>(), std::chars_format::general);
    return std::string(buffer, end.ptr);
  }
  return escaped(value);
}

// "unknown axis", with the name of `names` it was likely meant to be: "unknown axis (did you mean
// \"epochs\"?)".
template <class T, size_t N, class Name>
std::string unknown(const char* what, const std::string& word, Name name, const T (&names)[N]) {
  std::vector<std::string> known;
  for (const T& n : names) known.push_back(name(n));
  const std::string meant = near_miss(word, known);
  return std::string("unknown ") + what + (meant.empty() ? "" : " (did you mean \"" + meant + "\"?)");
}

[[noreturn]] void fail(const std::string& file, const std::string& where, const std::string& problem,
                       const std::string& allowed) {
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

// ---- Grid ---------------------------------------------------------------------------

// Whether a layer is of the class `class_name` as the spec parser reads it (a layer that names no
// type is a Dense), and the object that holds its arguments (the layer itself, or the "config" of
// Keras's get_config() form).
bool is_layer(const json& layer, const char* class_name) {
  if (!layer.is_object()) return false;
  const auto type = layer.find(layer.contains("class_name") ? "class_name" : "type");
  const std::string kind = type != layer.end() && type->is_string() ? type->get<std::string>() : "Dense";
  return KerasObject::names_class(kind, class_name);
}
json& layer_arguments(json& layer) {
  const auto config = layer.find("config");
  return layer.contains("class_name") && config != layer.end() && config->is_object() ? *config : layer;
}

// The hidden part's activations: each Activation layer's, and each Dense's that no Activation
// layer follows before the next Dense (Keras's Dense, BatchNormalization, Activation block keeps
// its Dense linear). The output layer is left as it is.
void set_hidden_activations(json& layers, const json& value) {
  const size_t none = layers.size();
  size_t dense = none;  // the last hidden Dense that no Activation layer has followed yet
  for (size_t i = 0; i + 1 < layers.size(); ++i) {
    if (is_layer(layers[i], "Dense")) {
      if (dense != none) layer_arguments(layers[dense])["activation"] = value;
      dense = i;
    } else if (is_layer(layers[i], "Activation")) {
      layer_arguments(layers[i])["activation"] = value;
      dense = none;
    }
  }
  if (dense != none) layer_arguments(layers[dense])["activation"] = value;
}

// The hidden layers for the widths: the layers before the base's first Dense stay in front, the
// output layer at the end, and each width is a copy of the base's first hidden block (its Dense and
// the layers after it up to the next Dense: a Dropout, a BatchNormalization, an Activation) with
// that width. A base with no hidden Dense gives linear Dense layers.
void set_hidden_widths(json& layers, const json& widths) {
  const size_t output = layers.size() - 1;
  size_t first = 0;
  while (first < output && !is_layer(layers[first], "Dense")) ++first;
  json block = json::array({json::object()});
  if (first < output) {
    block = json::array({layers[first]});
    for (size_t i = first + 1; i < output && !is_layer(layers[i], "Dense"); ++i)
      block.push_back(layers[i]);
  }
  json hidden(layers.begin(), layers.begin() + std::ptrdiff_t(std::min(first, output)));
  for (const json& units : widths) {
    json copy = block;
    json& dense = layer_arguments(copy[0]);
    dense["units"] = units;
    if (&units != &widths.front())  // the input's width is the first layer's to say
      for (const char* key : {"input_shape", "input_dim", "batch_input_shape"}) dense.erase(key);
    for (json& layer : copy) hidden.push_back(std::move(layer));
  }
  hidden.push_back(layers.back());
  layers = std::move(hidden);
}

// Sets one grid value into a model's JSON, where the spec parser will check it. Whatever cannot
// take the value (a missing or malformed part of the base) is left for the parser to name.
void apply(json& spec, const std::string& axis, const json& value) {
  if (axis == "hidden" || axis == "activation") {
    const auto layers = spec.find("layers");
    if (layers == spec.end() || !layers->is_array() || layers->empty()) return;
    if (axis == "activation") set_hidden_activations(*layers, value);
    else set_hidden_widths(*layers, value);
  } else if (axis == "learning_rate") {
    json& optimizer = spec["optimizer"];
    if (optimizer.is_null()) optimizer = "adam";  // the spec's default
    // Keras's shorthand, a name alone, made an object that can take the rate.
    if (optimizer.is_string()) optimizer = json{{"name", optimizer}};
    if (optimizer.is_object()) optimizer["learning_rate"] = value;
  } else if (axis == "seed") {
    spec["seed"] = value;
  } else {  // batch_size, epochs
    json& fit = spec["fit"];
    if (fit.is_null()) fit = json::object();
    if (fit.is_object()) fit[axis] = value;
  }
}

// When every model of a grid fails with the same problem, no axis value made it differ (it is the
// base's, or a one-valued axis's): a UserError for the file, said once rather than once per model.
void refuse_a_bad_base(const std::string& path, const std::vector<SweepEntry>& models,
                       const std::vector<std::string>& labels) {
  std::string problem;
  for (size_t i = 0; i < models.size(); ++i) {
    const std::string prefix = path + " " + labels[i] + ": ";
    if (models[i].error.rfind(prefix, 0) != 0) return;  // ok, or an error of another form
    const std::string own = models[i].error.substr(prefix.size());
    if (i > 0 && own != problem) return;
    problem = own;
  }
  if (models.size() > 1)
    throw UserError(path + ": all " + std::to_string(models.size()) + " models of the grid: " + problem);
}

// The models of a grid; `labels` gets each one's place for messages, like "grid (seed 1, epochs 2)".
std::vector<SweepEntry> grid_models(const std::string& path, const json& root, const std::string& sweep_name,
                                    std::vector<std::string>& labels) {
  const auto base = root.find("base");
  if (base == root.end()) fail(path, "base", "missing", "a grid varies a base spec: give one");
  if (!base->is_object()) fail(path, "base", "got " + shown_escaped(*base), "expected a model spec (an object)");
  // The base's name starts every model's name, which replaces it: check it here, or its error is lost.
  std::string base_name = sweep_name;
  if (base->contains("name")) {
    base_name = name_in(*base);
    if (base_name.empty())
      fail(path, "base.name", "got " + shown_escaped(base->at("name")), "expected a non-empty string of printable characters");
  }

  const json& grid = root.at("grid");
  if (!grid.is_object() || grid.empty())
    fail(path, "grid", "got " + shown_escaped(grid), "expected an object of one or more axes: " + kAxisKeys);
  for (const auto& [key, values] : grid.items()) {
    const std::string where = "grid." + one_line(key);
    if (std::none_of(std::begin(kAxes), std::end(kAxes), [&](const Axis& a) { return key == a.key; }))
      fail(path, where, unknown("axis", key, [](const Axis& a) { return a.key; }, kAxes), "allowed axes: " + kAxisKeys);
    if (!values.is_array() || values.empty())
      fail(path, where, "got " + shown_escaped(values), "expected a non-empty array of values");
    if (key == "hidden")  // each value becomes layers: a shape the parser cannot name once rewritten
      for (size_t i = 0; i < values.size(); ++i)
        if (!values[i].is_array())
          fail(path, where + "[" + std::to_string(i) + "]", "got " + shown_escaped(values[i]),
               "expected an array of the hidden layers' widths, like [100, 10]");
  }

  // The axes present, in the fixed order, and how many models their product makes.
  std::vector<std::pair<const Axis*, const json*>> axes;
  size_t total = 1;
  for (const Axis& axis : kAxes) {
    if (!grid.contains(axis.key)) continue;
    axes.emplace_back(&axis, &grid[axis.key]);
    total *= axes.back().second->size();  // cannot overflow: total <= 2^20 before, a size < 2^24
    if (total > kMaxModels)
      fail(path, "grid", "the axes make more than " + std::to_string(kMaxModels) + " models",
           "a sweep holds at most " + std::to_string(kMaxModels));
  }

  std::vector<SweepEntry> models;
  for (size_t index = 0; index < total; ++index) {
    json spec = *base;
    std::string name = base_name, label;
    size_t stride = total;  // the first axis varies slowest
    for (const auto& [axis, axis_values] : axes) {
      stride /= axis_values->size();
      const json& value = (*axis_values)[index / stride % axis_values->size()];
      apply(spec, axis->key, value);
      std::string part = value_text(value);
      if (value.is_array()) {  // hidden
        std::vector<std::string> widths;
        for (const json& units : value) widths.push_back(value_text(units));
        part = hidden_widths_text(widths);
      }
      name += "-" + std::string(axis->prefix) + part;
      label += (label.empty() ? "" : ", ") + std::string(axis->key) + " " + value_text(value);
    }
    spec["name"] = name;
    labels.push_back("grid (" + label + ")");
    models.push_back(parse_entry(std::move(spec), path + " " + labels.back(), name));
  }
  refuse_a_bad_base(path, models, labels);
  return models;
}

// ---- List ---------------------------------------------------------------------------

// The models of a list; `labels` gets each one's place for messages, like "models[2]".
std::vector<SweepEntry> list_models(const std::string& path, const json& root, const std::string& sweep_name,
                                    std::vector<std::string>& labels) {
  const json& list = root.at("models");
  if (!list.is_array() || list.empty())
    fail(path, "models", "got " + shown_escaped(list), "expected a non-empty array of model specs or spec file paths");
  if (list.size() > kMaxModels)
    fail(path, "models", std::to_string(list.size()) + " models",
         "a sweep holds at most " + std::to_string(kMaxModels));
  const json* base = nullptr;
  if (const auto it = root.find("base"); it != root.end()) {
    if (!it->is_object())
      fail(path, "base", "got " + shown_escaped(*it), "expected a model spec (an object) to merge each model over");
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
      models.push_back(
          {fallback, std::nullopt,
           label + ": got " + shown_escaped(item) + "; expected a model spec (an object) or the path of a spec file"});
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

// Results and weights are reported by the model's name: a later model with an earlier one's is refused.
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
      fail(path, one_line(entry.key()), unknown("key", entry.key(), [](const char* k) { return k; }, kTopKeys),
           "allowed keys: " + kTopKeyList + " (or a model spec, with its layers)");
  sweep.name = stem;
  if (const auto name = root.find("name"); name != root.end()) {
    sweep.name = name_in(root);
    if (sweep.name.empty())
      fail(path, "name", "got " + shown_escaped(*name), "expected a non-empty string of printable characters");
  }
  const bool has_models = root.contains("models");
  if (has_models == root.contains("grid"))
    fail(path, "top level", has_models ? "both \"models\" and \"grid\"" : "no \"models\" and no \"grid\"",
         "expected one: a list of models, or a grid of axes over a base spec");

  std::vector<std::string> labels;
  sweep.models = has_models ? list_models(path, root, sweep.name, labels) : grid_models(path, root, sweep.name, labels);
  refuse_repeated_names(path, sweep.models, labels);
  return sweep;
}

std::string hidden_widths_text(const std::vector<std::string>& widths) {
  std::string text;
  for (const std::string& units : widths) text += (text.empty() ? "" : "x") + units;
  return text.empty() ? "0" : text;
}

}  // namespace mf
