// A Keras Sequential's config as a spec's model (nn/keras_model.h): the three forms Keras writes,
// read by the spec's own reader, whether a spec names it as "keras_config" or the Python package's
// from_keras calls spec_from_keras; and the one-line refusals, each naming the place in the config.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nn/keras_model.h"
#include "nn/spec.h"
#include "runtime/error.h"
#include "test_support.h"

namespace mf {
namespace {

using nlohmann::json;
using testing::HasSubstr;
using testing::Not;
using testing::StartsWith;

const json kPolicy = {{"module", "keras"},
                      {"class_name", "DTypePolicy"},
                      {"config", {{"name", "float32"}}},
                      {"registered_name", nullptr}};

json serialized(const char* module, const char* class_name, json config) {
  return {{"module", module},
          {"class_name", class_name},
          {"config", std::move(config)},
          {"registered_name", nullptr}};
}

json input_layer(json shape) {
  json batch_shape = json::array({nullptr});
  for (const json& d : shape) batch_shape.push_back(d);
  return serialized("keras.layers", "InputLayer",
                    {{"batch_shape", batch_shape},
                     {"dtype", "float32"},
                     {"sparse", false},
                     {"ragged", false},
                     {"name", "input_layer"},
                     {"optional", false}});
}

json dense(const char* name, int units, const char* activation) {
  return serialized(
      "keras.layers", "Dense",
      {{"name", name},
       {"trainable", true},
       {"dtype", kPolicy},
       {"units", units},
       {"activation", activation},
       {"use_bias", true},
       {"kernel_initializer", serialized("keras.initializers", "HeNormal", {{"seed", nullptr}})},
       {"bias_initializer", serialized("keras.initializers", "Zeros", json::object())},
       {"kernel_regularizer", nullptr},
       {"bias_regularizer", nullptr},
       {"kernel_constraint", nullptr},
       {"bias_constraint", nullptr},
       {"quantization_config", nullptr}});
}

json compile_config() {
  return {{"optimizer", serialized("keras.optimizers", "RMSprop",
                                   {{"name", "rm_sprop"},
                                    {"learning_rate", 0.0010000000474974513},
                                    {"weight_decay", nullptr},
                                    {"use_ema", false},
                                    {"rho", 0.8},
                                    {"momentum", 0.0},
                                    {"epsilon", 1e-07},
                                    {"centered", false}})},
          {"loss", "sparse_categorical_crossentropy"},
          {"loss_weights", nullptr},
          {"metrics", {"accuracy"}},
          {"weighted_metrics", nullptr},
          {"run_eagerly", false},
          {"steps_per_execution", 1},
          {"jit_compile", "auto"}};
}

// What model.to_json() writes for Input(6), Dense(16, relu), Dense(3, softmax), compiled.
json to_json_config() {
  json config = serialized(
      "keras", "Sequential",
      {{"name", "classifier"},
       {"trainable", true},
       {"dtype", kPolicy},
       {"layers", {input_layer({6}), dense("dense", 16, "relu"), dense("dense_1", 3, "softmax")}},
       {"build_input_shape", {nullptr, 6}}});
  config["build_config"] = {{"input_shape", {nullptr, 6}}};
  config["compile_config"] = compile_config();
  return config;
}

// The same model as a spec of its own keys.
json own_spec() {
  return json::parse(R"({
    "name": "classifier", "input": 6,
    "layers": [{"units": 16, "activation": "relu", "kernel_initializer": "he_normal"},
               {"units": 3, "activation": "softmax", "kernel_initializer": "he_normal"}],
    "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"],
    "optimizer": {"name": "rmsprop", "learning_rate": 0.001, "rho": 0.8}})");
}

std::string keras_error(const json& config) {
  SCOPED_TRACE("config " + config.dump());
  const std::string message = test::user_error([&] { spec_from_keras(config, "from_keras"); });
  EXPECT_THAT(message, StartsWith("from_keras: "));
  EXPECT_THAT(message, Not(HasSubstr("\n")));
  return message;
}

TEST(KerasModel, ToJsonsFormIsTheSpecOfItsOwnKeys) {
  const json model = spec_from_keras(to_json_config(), "from_keras");
  EXPECT_EQ(parse_model_spec(model, "model"), parse_model_spec(own_spec(), "own"));
  EXPECT_EQ(model["name"], "classifier");
  EXPECT_EQ(model["input"], 6);
  EXPECT_FALSE(model.contains("input_shape"));
}

TEST(KerasModel, ASpecsKerasConfigIsTheSameModel) {
  json spec = {{"data", "synthetic:teacher"}, {"keras_config", to_json_config()}, {"seed", 3}};
  json own = own_spec();
  own.update({{"data", "synthetic:teacher"}, {"seed", 3}});
  EXPECT_EQ(parse_model_spec(spec, "spec.json"), parse_model_spec(own, "own.json"));
  // the spec's name is the model's where it gives one
  spec["name"] = "renamed";
  EXPECT_EQ(parse_model_spec(spec, "spec.json").name, "renamed");
}

class KerasConfigFile : public test::TempDirTest {};

TEST_F(KerasConfigFile, IsReadFromItsPath) {
  const std::string path = write("model.json", to_json_config().dump());
  const json spec = {{"keras_config", path}};
  EXPECT_EQ(parse_model_spec(spec, "spec.json"), parse_model_spec(own_spec(), "own"));
  const std::string missing = test::user_error([&] {
    parse_model_spec(json{{"keras_config", this->path("none.json")}}, "spec.json");
  });
  EXPECT_THAT(missing, HasSubstr("none.json"));
  // a mistake inside it names the file and the place in it
  json broken = to_json_config();
  broken["config"]["layers"][1]["config"]["units"] = 0;
  const std::string broken_path = write("broken.json", broken.dump());
  EXPECT_THAT(test::user_error([&] {
                parse_model_spec(json{{"keras_config", broken_path}}, "spec.json");
              }),
              StartsWith(broken_path + ": config.layers[1].config.units: got 0"));
}

TEST(KerasModel, GetConfigsFormWithABuildShapeAndNoInputLayer) {
  json config = to_json_config()["config"];
  config["layers"].erase(config["layers"].begin());
  const json model = spec_from_keras(config, "from_keras");
  EXPECT_EQ(model["input"], 6);
  // never compiled: the layers and input alone
  EXPECT_FALSE(model.contains("loss"));
  EXPECT_FALSE(model.contains("optimizer"));
  config.erase("build_input_shape");
  EXPECT_EQ(keras_error(config),
            "from_keras: top level: a model without an input shape; start it with "
            "keras.Input(shape=(features,)), or build it");
}

TEST(KerasModel, AnImageInputFlattenedGivesItsWidthAndInputShape) {
  json config = to_json_config();
  json& layers = config["config"]["layers"];
  layers[0] = input_layer({28, 28, 1});
  layers.insert(
      layers.begin() + 1,
      serialized("keras.layers", "Flatten",
                 {{"name", "flatten"}, {"dtype", kPolicy}, {"data_format", "channels_last"}}));
  const json model = spec_from_keras(config, "from_keras");
  EXPECT_EQ(model["input"], 784);
  EXPECT_EQ(model["input_shape"], json({28, 28, 1}));
  layers[1]["config"]["data_format"] = "channels_first";
  EXPECT_THAT(keras_error(config),
              HasSubstr("config.layers[1].config.data_format: got \"channels_first\""));
  layers.erase(layers.begin() + 1);
  EXPECT_EQ(keras_error(config),
            "from_keras: config.layers[0]: an input of shape [28,28,1] read by a Dense layer; "
            "multifit's rows are flat: put a Flatten first");
}

TEST(KerasModel, WhatMultifitDoesNotHaveIsRefusedWhereItIsWritten) {
  json functional = to_json_config();
  functional["class_name"] = "Functional";
  EXPECT_THAT(keras_error(functional),
              StartsWith("from_keras: class_name: a \"Functional\" model"));

  json frozen = to_json_config();
  frozen["config"]["trainable"] = false;
  EXPECT_THAT(keras_error(frozen), HasSubstr("config.trainable: got false"));

  json weighted = to_json_config();
  weighted["compile_config"]["loss_weights"] = {0.5};
  EXPECT_THAT(keras_error(weighted),
              HasSubstr("compile_config.loss_weights: got [0.5]; expected null"));

  json conv = to_json_config();
  conv["config"]["layers"][1] = serialized("keras.layers", "Conv2D", {{"filters", 8}});
  EXPECT_THAT(keras_error(conv), HasSubstr("config.layers[1].class_name: Conv2D is not a layer"));

  json half = to_json_config();
  half["config"]["layers"][1]["config"]["dtype"] = "mixed_float16";
  EXPECT_THAT(keras_error(half), HasSubstr("config.layers[1].config.dtype: got \"mixed_float16\""));
}

TEST(KerasModel, ANewerKerasSettingLeftNullIsTakenOnlyInKerassForm) {
  json config = to_json_config();
  config["config"]["layers"][1]["config"]["a_newer_setting"] = nullptr;
  EXPECT_EQ(parse_model_spec(spec_from_keras(config, "from_keras"), "model"),
            parse_model_spec(own_spec(), "own"));
  config["config"]["layers"][1]["config"]["a_newer_setting"] = 2;
  EXPECT_THAT(keras_error(config), HasSubstr("config.layers[1].config.a_newer_setting"));
  // hand-written, flat: every key must be one the layer has
  json spec = own_spec();
  spec["layers"][0]["a_newer_setting"] = nullptr;
  EXPECT_THAT(test::user_error([&] { parse_model_spec(spec, "spec.json"); }),
              HasSubstr("layers[0].a_newer_setting: unknown key"));
}

TEST(KerasModel, ASpecGivesItsModelOnce) {
  json beside = {{"keras_config", to_json_config()}, {"layers", json::array()}};
  EXPECT_EQ(test::user_error([&] { parse_model_spec(beside, "spec.json"); }),
            "spec.json: layers: a model key beside keras_config; give the model once: in "
            "keras_config, or in the spec's own keys");
  json uncompiled = to_json_config();
  uncompiled.erase("compile_config");
  EXPECT_THAT(test::user_error([&] {
                parse_model_spec(json{{"keras_config", uncompiled}}, "spec.json");
              }),
              StartsWith("spec.json: keras_config: a Keras config without a compiled loss"));
  for (const char* wrong : {"model.keras", "{\"class_name\": \"Sequential\"}"})
    EXPECT_THAT(test::user_error([&] {
                  parse_model_spec(json{{"keras_config", wrong}}, "spec.json");
                }),
                StartsWith("spec.json: keras_config: "))
        << wrong;
  EXPECT_THAT(test::user_error([&] {
                parse_model_spec(json{{"keras_config", 3}}, "spec.json");
              }),
              StartsWith("spec.json: keras_config: got 3; expected a Keras Sequential's config"));
}

TEST(KerasModel, ALayerIsNamedByItsPlaceInTheConfig) {
  json config = to_json_config();
  json& layers = config["config"]["layers"];
  layers.push_back(serialized("keras.layers", "Dropout", {{"name", "dropout"}, {"rate", 0.5}}));
  EXPECT_THAT(keras_error(config), StartsWith("from_keras: config.layers[2].config.activation: "
                                              "softmax on a hidden layer"));
  layers[2]["config"]["activation"] = "linear";
  EXPECT_THAT(keras_error(config),
              StartsWith("from_keras: config.layers[3]: a Dropout layer last"));
  layers.erase(layers.begin() + 1, layers.end());
  EXPECT_EQ(keras_error(config),
            "from_keras: config.layers: an InputLayer and no layer; a model has at least one Dense "
            "layer");
}

TEST(KerasModel, ALossDtypeIsFloat32WrittenAnyWay) {
  for (const json& dtype : {json(nullptr), json("float32"), kPolicy}) {
    json config = to_json_config();
    config["compile_config"]["loss"] = serialized("keras.losses", "SparseCategoricalCrossentropy",
                                                  {{"name", "sparse_categorical_crossentropy"},
                                                   {"reduction", "sum_over_batch_size"},
                                                   {"from_logits", false},
                                                   {"ignore_class", nullptr},
                                                   {"dtype", dtype}});
    EXPECT_EQ(spec_from_keras(config, "from_keras")["loss"], "sparse_categorical_crossentropy")
        << dtype;
  }
}

// Keras's categorical cross-entropy reads one-hot labels: "accuracy" beside it is categorical, and
// mse compares each output with its own column (a spec without "targets" reads class indices, where
// neither would be); the spec converted leaves "targets" to the data.
TEST(KerasModel, MetricsBesideCategoricalCrossEntropyAreReadAgainstOneHotLabels) {
  json config = to_json_config();
  config["compile_config"]["loss"] = "categorical_crossentropy";
  config["compile_config"]["metrics"] = {"accuracy", "mse"};
  const json spec = spec_from_keras(config, "from_keras");
  EXPECT_EQ(spec["metrics"][0]["class_name"], "CategoricalAccuracy") << spec["metrics"];
  EXPECT_EQ(spec["metrics"][0]["config"]["name"], "accuracy");
  EXPECT_EQ(spec["metrics"][1]["class_name"], "MeanSquaredError");
  EXPECT_FALSE(spec.contains("targets"));
}

// A spec with every kind of layer, initializer and regularizer, a schedule and a loss with
// settings.
json rich_spec() {
  return json::parse(R"({
    "name": "wide", "input": 784, "input_shape": [28, 28, 1], "targets": 1,
    "layers": [{"type": "Flatten"},
               {"units": 32, "activation": "gelu", "use_bias": false,
                "kernel_initializer": {"name": "truncated_normal", "mean": 0.0, "stddev": 0.02},
                "kernel_regularizer": {"name": "l1_l2", "l1": 0.0, "l2": 1e-4},
                "activity_regularizer": "l1"},
               {"type": "BatchNormalization", "momentum": 0.9, "epsilon": 1e-5, "scale": false,
                "gamma_initializer": {"name": "constant", "value": 0.5}},
               {"type": "Dropout", "rate": 0.25},
               {"type": "Activation", "activation": "leaky_relu"},
               {"units": 10, "activation": "linear",
                "bias_initializer": {"name": "random_uniform", "minval": -0.1, "maxval": 0.1}}],
    "optimizer": {"name": "rmsprop", "rho": 0.8, "centered": true, "clipnorm": 1.0,
                  "learning_rate": {"class_name": "CosineDecay",
                                    "config": {"initial_learning_rate": 0.01, "decay_steps": 100,
                                               "warmup_target": 0.02, "warmup_steps": 10}}},
    "loss": {"name": "sparse_categorical_crossentropy", "from_logits": true},
    "metrics": ["accuracy", {"class_name": "SparseCategoricalAccuracy", "config": {"name": "acc"}}]})");
}

TEST(KerasModel, ASpecGoesToKerasAndBackTheSame) {
  for (json spec : {rich_spec(), own_spec()}) {
    const json config = keras_config(spec, "to_keras");
    EXPECT_EQ(parse_model_spec(spec_from_keras(json::parse(config.dump()), "from_keras"), "back"),
              parse_model_spec(spec, "spec"))
        << config.dump();
  }
  // Huber's delta, which Keras 3's get_config() leaves out, is written
  json huber = own_spec();
  huber["loss"] = {{"name", "huber"}, {"delta", 0.7}};
  huber["layers"][1]["activation"] = "linear";
  huber["metrics"] = json::array();
  const json loss = keras_config(huber, "to_keras")["compile_config"]["loss"];
  EXPECT_EQ(loss["class_name"], "Huber");
  EXPECT_EQ(loss["config"]["delta"], 0.7);
}

TEST(KerasModel, TheKerasConfigIsWhatKerasWrites) {
  const nlohmann::ordered_json config = keras_config(rich_spec(), "to_keras");
  EXPECT_EQ(config["class_name"], "Sequential");
  const auto& layers = config["config"]["layers"];
  EXPECT_EQ(layers[0]["config"]["batch_shape"], json({nullptr, 28, 28, 1}));
  std::vector<std::string> names;
  for (const auto& layer : layers) names.push_back(layer["config"]["name"]);
  EXPECT_EQ(names,
            (std::vector<std::string>{"input_layer", "flatten", "dense", "batch_normalization",
                                      "dropout", "activation", "dense_1"}));
  EXPECT_EQ(layers[2]["build_config"]["input_shape"], json({nullptr, 784}));
  EXPECT_FALSE(layers[4].contains("build_config")) << "Keras writes none for a Dropout";
  EXPECT_EQ(layers[2]["config"]["kernel_initializer"]["class_name"], "TruncatedNormal");
  EXPECT_EQ(layers[2]["config"]["kernel_regularizer"]["class_name"], "L2");
  EXPECT_EQ(layers[2]["config"]["activity_regularizer"]["class_name"], "L1");
  const auto& optimizer = config["compile_config"]["optimizer"];
  EXPECT_EQ(optimizer["class_name"], "RMSprop");
  EXPECT_EQ(optimizer["config"]["name"], "rm_sprop");
  EXPECT_EQ(optimizer["config"]["learning_rate"]["class_name"], "CosineDecay");
  // a model never compiled has no compile_config
  json bare = own_spec();
  bare.erase("loss");
  EXPECT_FALSE(keras_config(bare, "to_keras").contains("compile_config"));
  EXPECT_THAT(test::user_error([] {
                keras_config(json{{"layers", json::array()}}, "to_keras");
              }),
              StartsWith("to_keras: layers: got []"));
}

TEST(KerasModel, ALossOrMetricKerasSerializedAsAFunctionIsItsName) {
  const json function = {{"module", "builtins"},
                         {"class_name", "function"},
                         {"config", "acc"},
                         {"registered_name", "function"}};
  json config = to_json_config();
  config["compile_config"]["metrics"] = {function};
  const ModelSpec spec = parse_model_spec(spec_from_keras(config, "from_keras"), "model");
  ASSERT_EQ(spec.metrics->size(), 1u);
  EXPECT_EQ(spec.metrics->front().name, "acc");
  EXPECT_EQ(spec.metrics->front().kind, Metric::sparse_categorical_accuracy);
  json loss = function;
  loss["config"] = "huber";
  config["compile_config"]["loss"] = loss;
  config["compile_config"]["metrics"] = json::array();
  config["config"]["layers"][2]["config"]["activation"] = "linear";
  EXPECT_EQ(spec_from_keras(config, "from_keras")["loss"], "huber");
}

}  // namespace
}  // namespace mf
