#include "nn/sweep_axes.h"

#include <algorithm>
#include <charconv>
#include <iterator>

#include "nn/keras_object.h"
#include "runtime/names.h"

namespace mf {
namespace {

using nlohmann::json;

constexpr SweepAxis kAxes[] = {{"hidden", "h"},  {"units", "u"},          {"activation", ""},
                               {"dropout", "d"}, {"learning_rate", "lr"}, {"batch_size", "b"},
                               {"seed", "s"},    {"epochs", "e"}};

// Whether a layer is of the class `class_name` as the spec parser reads it (a layer that names no
// type is a Dense), and the object that holds its arguments (the layer itself, or the "config" of
// Keras's get_config() form).
bool is_layer(const json& layer, const char* class_name) {
  if (!layer.is_object()) return false;
  const auto type = layer.find(layer.contains("class_name") ? "class_name" : "type");
  const std::string kind =
      type != layer.end() && type->is_string() ? type->get<std::string>() : "Dense";
  return KerasObject::names_class(kind, class_name);
}
json& layer_arguments(json& layer) {
  const auto config = layer.find("config");
  return layer.contains("class_name") && config != layer.end() && config->is_object() ? *config
                                                                                      : layer;
}

// The spec's layers when it has some (an array, not empty), else null.
json* layers_of(json& spec) {
  const auto layers = spec.find("layers");
  return layers != spec.end() && layers->is_array() && !layers->empty() ? &*layers : nullptr;
}

// Sets `key` of every hidden layer of class `class_name` (the output layer is left as it is).
void set_hidden(json& layers, const char* class_name, const char* key, const json& value) {
  for (size_t i = 0; i + 1 < layers.size(); ++i)
    if (is_layer(layers[i], class_name)) layer_arguments(layers[i])[key] = value;
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

// Whether the base has a hidden layer of that class (one before its output layer).
bool has_hidden(const json& base, const char* class_name) {
  const auto layers = base.find("layers");
  if (layers == base.end() || !layers->is_array()) return false;
  for (size_t i = 0; i + 1 < layers->size(); ++i)
    if (is_layer((*layers)[i], class_name)) return true;
  return false;
}

}  // namespace

std::span<const SweepAxis> sweep_axes() { return kAxes; }

const std::string& sweep_axis_list() {
  static const std::string list =
      joined(kAxes, [](const SweepAxis& a) { return std::string(a.key); });
  return list;
}

const SweepAxis* find_sweep_axis(const std::string& key) {
  const auto it = std::find_if(std::begin(kAxes), std::end(kAxes),
                               [&](const SweepAxis& a) { return key == a.key; });
  return it == std::end(kAxes) ? nullptr : it;
}

std::string axis_needs(const std::string& axis, const json& base) {
  const bool model_axis = axis == "hidden" || axis == "units" || axis == "activation" ||
                          axis == "dropout" || axis == "learning_rate";
  if (model_axis && base.is_object() && base.contains("keras_config"))
    return "the base gives its model as keras_config, which the sweep's model axes do not edit; give the base's model as the spec's own keys (multifit.from_keras(...).spec() writes them), or vary batch_size, seed or epochs";
  if (axis == "units" && !has_hidden(base, "Dense"))
    return "the base has no hidden Dense layer for it to set; give the base one, or vary \"hidden\"";
  if (axis == "dropout" && !has_hidden(base, "Dropout"))
    return "the base has no Dropout layer for it to set; add one ({\"type\": \"Dropout\", \"rate\": 0.2}) where the rate should vary";
  return "";
}

void apply_axis(json& spec, const std::string& axis, const json& value) {
  if (axis == "hidden" || axis == "activation" || axis == "units" || axis == "dropout") {
    json* layers = layers_of(spec);
    if (!layers) return;
    if (axis == "activation")
      set_hidden_activations(*layers, value);
    else if (axis == "hidden")
      set_hidden_widths(*layers, value);
    else if (axis == "units")
      set_hidden(*layers, "Dense", "units", value);
    else
      set_hidden(*layers, "Dropout", "rate", value);
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

std::string escaped(const json& value) {
  return value.dump(-1, ' ', true, json::error_handler_t::replace);
}

std::string shown_escaped(const json& value) {
  constexpr size_t kMaxChars = 60;
  std::string text = escaped(value);
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

bool printable(const std::string& text) {
  return std::none_of(text.begin(), text.end(),
                      [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

std::string one_line(const std::string& text) {
  if (printable(text)) return text;
  const std::string quoted = escaped(json(text));
  return quoted.substr(1, quoted.size() - 2);
}

std::string axis_value_text(const json& value) {
  if (value.is_string()) return one_line(value.get<std::string>());
  if (value.is_number_float()) {
    char buffer[32];
    const std::to_chars_result end = std::to_chars(buffer, buffer + sizeof buffer,
                                                   value.get<double>(), std::chars_format::general);
    return std::string(buffer, end.ptr);
  }
  return escaped(value);
}

std::string axis_name_part(const SweepAxis& axis, const json& value) {
  if (!value.is_array()) return axis.prefix + axis_value_text(value);
  std::vector<std::string> widths;  // hidden
  for (const json& units : value) widths.push_back(axis_value_text(units));
  return axis.prefix + hidden_widths_text(widths);
}

std::string hidden_widths_text(const std::vector<std::string>& widths) {
  std::string text;
  for (const std::string& units : widths) text += (text.empty() ? "" : "x") + units;
  return text.empty() ? "0" : text;
}

}  // namespace mf
