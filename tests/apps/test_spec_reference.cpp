// The reference `multifit train --help` prints (apps/multifit/spec_reference.h): it names every
// name the parser takes and every key it reads, its lists made from the parser's own tables.
#include "apps/multifit/spec_reference.h"

#include <cctype>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kernels/activations.h"
#include "kernels/losses.h"
#include "kernels/optimizer_math.h"
#include "nn/spec.h"

namespace mf {
namespace {

using nlohmann::json;

ModelSpec parse(const json& j) { return parse_model_spec(j, "t.json"); }

// Every key to_json writes (the spec's every setting), of `j` and what it holds.
void keys_of(const json& j, std::set<std::string>& keys) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (key != "class_name" && key != "config") keys.insert(key);
      keys_of(value, keys);
    }
  } else if (j.is_array()) {
    for (const json& item : j) keys_of(item, keys);
  }
}

// The reference names every name the parser takes and every key it reads, so that it stays the
// one place a user finds them.
TEST(KerasSpec, TheSpecReferenceNamesEveryNameAndKey) {
  const std::string reference = spec_reference();
  const auto named = [&](const std::string& name) {
    return reference.find(name) != std::string::npos;
  };
  for (const auto& n : kActivationNames) EXPECT_TRUE(named(n.name)) << n.name;
  for (const auto& n : kLayerKindNames)
    EXPECT_TRUE(named(std::string("\"") + n.name + "\"")) << n.name;
  for (const auto& n : kOptimizerNames) EXPECT_TRUE(named(n.identifier)) << n.identifier;
  for (const auto& n : kScheduleNames) EXPECT_TRUE(named(n.class_name)) << n.class_name;
  for (const auto& n : kMetricNames) EXPECT_TRUE(named(n.identifier)) << n.identifier;
  for (const auto& n : kLossNames) EXPECT_TRUE(named(n.identifier)) << n.identifier;
  std::set<std::string> keys;
  json spec = json::parse(R"({
    "input": 6, "targets": 3, "name": "m", "data": "synthetic:teacher", "seed": 1,
    "layers": [
      {"type": "Dense", "units": 16, "activation": "selu", "kernel_regularizer": "l2",
       "bias_regularizer": "l1", "activity_regularizer": "l2"},
      {"type": "Dropout", "rate": 0.125}, {"type": "BatchNormalization"},
      {"type": "Activation", "activation": "relu"}, {"type": "Flatten"},
      {"type": "Dense", "units": 3, "activation": "softmax"}],
    "loss": {"name": "categorical_crossentropy", "label_smoothing": 0.2}, "metrics": ["accuracy"],
    "fit": {"validation_split": 0.25, "callbacks": [{"type": "EarlyStopping"}, {"type": "ReduceLROnPlateau"}]}
  })");
  keys_of(to_json(parse(spec)), keys);
  spec["loss"] = {{"name", "huber"}};
  spec["layers"].back()["activation"] = "linear";
  spec.erase("metrics");
  const char* optimizers[] = {
      R"({"name": "adam", "amsgrad": true, "clipnorm": 1})",
      R"({"name": "adamw", "global_clipnorm": 1})",
      R"({"name": "sgd", "momentum": 0.9, "nesterov": true, "clipvalue": 1})",
      R"({"name": "rmsprop", "centered": true})",
      R"({"name": "adagrad"})",
      R"({"name": "adamax"})",
      R"({"name": "nadam"})",
      R"({"name": "adam", "learning_rate": {"name": "ExponentialDecay", "initial_learning_rate": 0.1, "decay_steps": 2, "decay_rate": 0.5}})",
      R"({"name": "adam", "learning_rate": {"name": "CosineDecay", "initial_learning_rate": 0.1, "decay_steps": 2, "warmup_target": 0.2}})",
      R"({"name": "adam", "learning_rate": {"name": "PolynomialDecay", "initial_learning_rate": 0.1, "decay_steps": 2}})",
      R"({"name": "adam", "learning_rate": {"name": "PiecewiseConstantDecay", "boundaries": [1], "values": [0.1, 0.01]}})"};
  for (const char* optimizer : optimizers) {
    spec["optimizer"] = json::parse(optimizer);
    spec["fit"].erase("callbacks");
    keys_of(to_json(parse(spec)), keys);
  }
  const auto word = [&](const std::string& key) {  // the key, not part of a longer name
    const auto letter = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    };
    for (size_t at = reference.find(key); at != std::string::npos; at = reference.find(key, at + 1))
      if ((at == 0 || !letter(reference[at - 1])) &&
          (at + key.size() == reference.size() || !letter(reference[at + key.size()])))
        return true;
    return false;
  };
  for (const std::string& key : keys) EXPECT_TRUE(word(key)) << key;
}

// The lists are the tables' and wrap as the hand-written text does: a value's other names beside
// it, each optimizer's defaults as Keras's, no line past 100 columns.
TEST(KerasSpec, TheSpecReferenceListsTheTablesWrapped) {
  const std::string reference = spec_reference();
  std::istringstream lines(reference);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
  std::string flat;  // every run of spaces and line breaks as one space
  for (char c : reference)
    if (!std::isspace(static_cast<unsigned char>(c)) || (!flat.empty() && flat.back() != ' '))
      flat += std::isspace(static_cast<unsigned char>(c)) ? ' ' : c;
  for (const char* entry :
       {"activations linear, relu, sigmoid, tanh, softmax, gelu, swish (silu), elu,",
        "log_cosh (logcosh), msle (mean_squared_logarithmic_error).",
        "accuracy (acc), binary_accuracy,", "mse (mean_squared_error)",
        "adam (beta_1 0.9, beta_2 0.999, epsilon 1e-07, amsgrad false), sgd (momentum 0, nesterov "
        "false, learning_rate 0.01),",
        "adamw (beta_1 0.9, beta_2 0.999, epsilon 1e-07, amsgrad false, weight_decay 0.004)",
        "adagrad (initial_accumulator_value 0.1, epsilon 1e-07)", "lion (beta_1 0.9, beta_2 0.99).",
        "ExponentialDecay (initial_learning_rate, decay_steps, decay_rate, staircase false)",
        "CosineDecay (initial_learning_rate, decay_steps, alpha 0, warmup_target null, "
        "warmup_steps 0)",
        "PolynomialDecay (initial_learning_rate, decay_steps, end_learning_rate 0.0001, power 1, "
        "cycle false)",
        "PiecewiseConstantDecay (boundaries, values)",
        "constant (value 0), random_uniform (minval -0.05, maxval 0.05), random_normal (mean 0, "
        "stddev 0.05), truncated_normal (mean 0, stddev 0.05)."})
    EXPECT_NE(flat.find(entry), std::string::npos) << entry << "\nnot in:\n" << flat;
}

}  // namespace
}  // namespace mf
