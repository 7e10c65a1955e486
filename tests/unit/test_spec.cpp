#include "nn/spec.h"
#include "nn/sweep.h"

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/error.h"
#include "test_support.h"

namespace mf {
namespace {

using nlohmann::json;
using testing::AllOf;
using testing::HasSubstr;
using testing::Not;
using testing::StartsWith;

// The smallest valid spec; each test changes one thing.
json minimal() {
  return json::parse(R"({
    "input": 4,
    "layers": [{"units": 8, "activation": "relu"}, {"units": 3, "activation": "softmax"}],
    "loss": "sparse_categorical_crossentropy"
  })");
}

ModelSpec parse(const json& spec) { return parse_model_spec(spec, "spec.json"); }

// Parses a spec that must be rejected; checks the message names the source and is one line.
std::string error_for(const json& spec) {
  SCOPED_TRACE("spec " + spec.dump());
  const std::string message = test::user_error([&] { parse(spec); });
  EXPECT_THAT(message, StartsWith("spec.json: "));
  EXPECT_THAT(message, Not(HasSubstr("\n")));
  return message;
}

// A spec with one top-level value replaced (or added).
json with(const std::string& key, const json& value) {
  json spec = minimal();
  spec[key] = value;
  return spec;
}

// ---- Valid specs ---------------------------------------------------------------

TEST(Spec, DefaultsApplied) {
  const ModelSpec spec = parse(minimal());
  EXPECT_EQ(spec.name, "model");
  EXPECT_EQ(spec.data, "fashion-mnist");
  EXPECT_EQ(spec.input, 4);
  ASSERT_EQ(spec.layers.size(), 2u);
  EXPECT_EQ(spec.layers[0].units, 8);
  EXPECT_EQ(spec.layers[0].activation, Activation::relu);
  EXPECT_EQ(spec.outputs(), 3);
  EXPECT_EQ(spec.output_activation(), Activation::softmax);
  EXPECT_EQ(spec.loss, Loss::sparse_categorical_crossentropy);
  EXPECT_EQ(spec.optimizer.kind, OptimizerKind::adam);
  EXPECT_FLOAT_EQ(spec.optimizer.learning_rate, 0.001f);
  EXPECT_EQ(spec.optimizer.beta_1, 0.9);
  EXPECT_EQ(spec.optimizer.beta_2, 0.999);
  EXPECT_FLOAT_EQ(spec.optimizer.epsilon, 1e-7f);
  EXPECT_EQ(spec.fit.epochs, 1);
  EXPECT_EQ(spec.fit.batch_size, 32);
  EXPECT_EQ(spec.fit.validation_split, 0.0);
  EXPECT_TRUE(spec.fit.shuffle);
  EXPECT_EQ(spec.seed, 0u);
  EXPECT_EQ(spec.memory.limit_bytes, size_t(256) << 20);
  EXPECT_EQ(spec.memory.mode, PoolMode::grow);
  EXPECT_FALSE(spec.input_shape.has_value());
  EXPECT_TRUE(spec.preprocessing.empty());
  EXPECT_EQ(spec.pipeline.workers, 1);
  EXPECT_EQ(spec.pipeline.prefetch, 2);
  EXPECT_EQ(spec.device_share, DeviceShare{});  // the whole GPU
}

TEST(Spec, LayerActivationDefaultsToLinearAndTypeDenseIsAccepted) {
  json spec = with("loss", "mse");
  spec["layers"] = json::parse(R"([{"type": "dense", "units": 2}])");
  const ModelSpec parsed = parse(spec);
  EXPECT_EQ(parsed.output_activation(), Activation::linear);
}

TEST(Spec, FullSpecParsedExactly) {
  const ModelSpec spec = parse(json::parse(R"({
    "name": "full",
    "data": "mnist",
    "input": 784,
    "layers": [{"type": "dense", "units": 256, "activation": "tanh"},
               {"units": 64, "activation": "linear"},
               {"units": 10, "activation": "softmax"}],
    "loss": "sparse_categorical_crossentropy",
    "optimizer": {"name": "adam", "learning_rate": 0.002, "beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-6},
    "fit": {"epochs": 10, "batch_size": 64, "validation_split": 0.1, "shuffle": false},
    "seed": 42,
    "memory": {"limit": "64MiB", "mode": "reserve"}
  })"));
  EXPECT_EQ(spec.name, "full");
  EXPECT_EQ(spec.data, "mnist");
  EXPECT_EQ(spec.input, 784);
  ASSERT_EQ(spec.layers.size(), 3u);
  EXPECT_EQ(spec.layers[0].units, 256);
  EXPECT_EQ(spec.layers[0].activation, Activation::tanh);
  EXPECT_EQ(spec.layers[1].units, 64);
  EXPECT_EQ(spec.layers[1].activation, Activation::linear);
  EXPECT_EQ(spec.layers[2].units, 10);
  EXPECT_EQ(spec.layers[2].activation, Activation::softmax);
  EXPECT_EQ(spec.loss, Loss::sparse_categorical_crossentropy);
  EXPECT_EQ(spec.optimizer.kind, OptimizerKind::adam);
  EXPECT_EQ(spec.optimizer.learning_rate, 0.002f);
  EXPECT_EQ(spec.optimizer.beta_1, 0.8);  // as written, in double
  EXPECT_EQ(spec.optimizer.beta_2, 0.99);
  EXPECT_EQ(spec.optimizer.epsilon, 1e-6f);
  EXPECT_EQ(spec.fit.epochs, 10);
  EXPECT_EQ(spec.fit.batch_size, 64);
  EXPECT_EQ(spec.fit.validation_split, 0.1);
  EXPECT_FALSE(spec.fit.shuffle);
  EXPECT_EQ(spec.seed, 42u);
  EXPECT_EQ(spec.memory.limit_bytes, size_t(64) << 20);
  EXPECT_EQ(spec.memory.mode, PoolMode::reserve);
}

TEST(Spec, SgdDefaultsToKerasLearningRate) {
  const ModelSpec spec = parse(with("optimizer", {{"name", "sgd"}}));
  EXPECT_EQ(spec.optimizer.kind, OptimizerKind::sgd);
  EXPECT_FLOAT_EQ(spec.optimizer.learning_rate, 0.01f);
  EXPECT_EQ(spec.optimizer.momentum, 0.f);
}

TEST(Spec, SgdSettingsParsed) {
  const ModelSpec spec =
      parse(with("optimizer", {{"name", "sgd"}, {"learning_rate", 0.5}, {"momentum", 0.9}}));
  EXPECT_EQ(spec.optimizer.learning_rate, 0.5f);
  EXPECT_EQ(spec.optimizer.momentum, 0.9f);
}

TEST(Spec, AdamWithOnlyAName) {
  const ModelSpec spec = parse(with("optimizer", {{"name", "adam"}}));
  EXPECT_EQ(spec.optimizer.kind, OptimizerKind::adam);
  EXPECT_FLOAT_EQ(spec.optimizer.learning_rate, 0.001f);
}

TEST(Spec, IntegerLearningRateIsANumber) {
  EXPECT_EQ(
      parse(with("optimizer", {{"name", "sgd"}, {"learning_rate", 1}})).optimizer.learning_rate,
      1.f);
}

TEST(Spec, WidthsAreCappedForTheKernelGrids) {
  json spec = minimal();
  spec["input"] = 1048577;
  EXPECT_THAT(error_for(spec),
              HasSubstr("input: got 1048577; expected a positive integer no larger than 1048576"));
}

TEST(Spec, RangeEdgesAccepted) {
  json spec = minimal();
  spec["input"] = 1048576;
  spec["optimizer"] = {{"name", "adam"}, {"beta_1", 0}, {"beta_2", 0.0}};
  spec["fit"] = {{"validation_split", 0}};
  spec["seed"] = UINT64_MAX;
  const ModelSpec parsed = parse(spec);
  EXPECT_EQ(parsed.input, 1048576);
  EXPECT_EQ(parsed.optimizer.beta_1, 0.0);
  EXPECT_EQ(parsed.seed, UINT64_MAX);
  EXPECT_EQ(parse(with("optimizer", {{"name", "sgd"}, {"momentum", 0}})).optimizer.momentum, 0.f);
}

TEST(Spec, ParsedAndBuiltIntegersAgree) {
  // Parsed JSON holds non-negative integers as unsigned, built JSON as signed; both are read.
  EXPECT_EQ(parse(json::parse(with("seed", 7).dump())).seed, 7u);
  EXPECT_EQ(parse(with("seed", int64_t(7))).seed, 7u);
}

// ---- Memory ---------------------------------------------------------------------

TEST(Spec, MemoryLimitAsSizeString) {
  EXPECT_EQ(parse(with("memory", {{"limit", "64MiB"}})).memory.limit_bytes, size_t(64) << 20);
  EXPECT_EQ(parse(with("memory", {{"limit", "1.5GiB"}})).memory.limit_bytes, size_t(3) << 29);
  EXPECT_EQ(parse(with("memory", {{"limit", "512KB"}})).memory.limit_bytes, 512000u);
}

TEST(Spec, MemoryLimitAsBytes) {
  EXPECT_EQ(parse(with("memory", {{"limit", 4096}})).memory.limit_bytes, 4096u);
  EXPECT_EQ(parse(json::parse(R"({"input": 1, "layers": [{"units": 1}], "loss": "mse",
                                  "memory": {"limit": 10000000000}})"))
                .memory.limit_bytes,
            10000000000u);
}

TEST(Spec, MemoryModeDefaultsToGrowWithALimit) {
  EXPECT_EQ(parse(with("memory", {{"limit", 4096}})).memory.mode, PoolMode::grow);
}

TEST(Spec, MemoryLimitBadStringRejected) {
  EXPECT_THAT(error_for(with("memory", {{"limit", "64XB"}})),
              AllOf(HasSubstr("memory.limit: got \"64XB\""), HasSubstr("MiB")));
}

TEST(Spec, MemoryLimitRoundingToZeroRejected) {
  EXPECT_THAT(error_for(with("memory", {{"limit", "0.1"}})),
              HasSubstr("memory.limit: got \"0.1\""));
}

TEST(Spec, MemoryLimitNonPositiveRejected) {
  EXPECT_THAT(error_for(with("memory", {{"limit", 0}})), HasSubstr("memory.limit: got 0"));
  EXPECT_THAT(error_for(with("memory", {{"limit", -5}})), HasSubstr("memory.limit: got -5"));
}

TEST(Spec, MemoryLimitWrongTypeRejected) {
  EXPECT_THAT(error_for(with("memory", {{"limit", 1.5}})), HasSubstr("memory.limit: got 1.5"));
  EXPECT_THAT(error_for(with("memory", {{"limit", true}})), HasSubstr("memory.limit: got true"));
}

TEST(Spec, MemoryLimitStringWithNewlineStaysOneLine) {
  EXPECT_THAT(error_for(with("memory", {{"limit", "64\nMiB"}})),
              HasSubstr("memory.limit: got \"64\\nMiB\""));
}

TEST(Spec, MemoryModeUnknownRejected) {
  EXPECT_THAT(error_for(with("memory", {{"mode", "pinned"}})),
              AllOf(HasSubstr("memory.mode: got \"pinned\""), HasSubstr("grow, reserve")));
}

TEST(Spec, MemoryNotAnObjectRejected) {
  EXPECT_THAT(error_for(with("memory", "64MiB")),
              AllOf(HasSubstr("memory: got \"64MiB\""), HasSubstr("limit, mode")));
}

// ---- Input shape, preprocessing, pipeline ---------------------------------------

// minimal() with its 4 inputs as a 2x2 grey image, flipped and noised, prepared by 3 workers.
json image_spec() {
  json spec = minimal();
  spec["input_shape"] = {2, 2, 1};
  spec["preprocessing"] = json::parse(R"([{"type": "RandomFlip", "mode": "horizontal"},
                                          {"type": "GaussianNoise", "stddev": 0.1}])");
  spec["pipeline"] = {{"workers", 3}, {"prefetch", 4}};
  return spec;
}

TEST(Spec, ImageKeysParsed) {
  const ModelSpec spec = parse(image_spec());
  EXPECT_EQ(spec.input_shape, (ImageShape{2, 2, 1}));
  EXPECT_EQ(spec.preprocessing.describe(),
            "RandomFlip(mode=horizontal), GaussianNoise(stddev=0.1)");
  EXPECT_EQ(spec.pipeline.workers, 3);
  EXPECT_EQ(spec.pipeline.prefetch, 4);
  EXPECT_EQ(parse(with("pipeline", {{"workers", 64}})).pipeline, (PipelineSpec{64, 2}));
  EXPECT_EQ(parse(with("pipeline", {{"prefetch", 64}})).pipeline, (PipelineSpec{1, 64}));
  // A flat input takes the flat operations, and an image shape needs no preprocessing.
  EXPECT_FALSE(parse(with("preprocessing",
                          json::parse(R"([{"type": "HostWork", "microseconds_per_sample": 1}])")))
                   .preprocessing.empty());
  EXPECT_TRUE(parse(with("input_shape", {1, 4, 1})).preprocessing.empty());
}

TEST(Spec, InputShapeErrorsNameTheFieldAndValue) {
  const std::string allowed = "expected [height, width, channels], three positive integers";
  EXPECT_THAT(error_for(with("input_shape", "2x2")),
              HasSubstr("spec.json: input_shape: got \"2x2\"; " + allowed));
  EXPECT_THAT(error_for(with("input_shape", {2, 2})),
              HasSubstr("spec.json: input_shape: got [2,2]; " + allowed));
  EXPECT_THAT(error_for(with("input_shape", {2, 2.0, 1})),
              HasSubstr("input_shape: got [2,2.0,1]; " + allowed));
  EXPECT_THAT(error_for(with("input_shape", {2, 0, 2})),
              HasSubstr("input_shape: got [2,0,2]; " + allowed));
  // Both numbers, with or without preprocessing.
  EXPECT_THAT(error_for(with("input_shape", {2, 3, 1})),
              HasSubstr("spec.json: input_shape: [2, 3, 1] holds 6 values, but input is 4; "
                        "expected a shape whose "
                        "height x width x channels is the input's width"));
  json spec = image_spec();
  spec["input_shape"] = {1, 1, 3};
  EXPECT_THAT(error_for(spec),
              HasSubstr("spec.json: input_shape: [1, 1, 3] holds 3 values, but input is 4"));
}

TEST(Spec, PreprocessingErrorsNameTheFieldAndValue) {
  EXPECT_THAT(
      error_for(with("preprocessing", {{"type", "RandomFlip"}})),
      HasSubstr(
          R"(spec.json: preprocessing: got {"type":"RandomFlip"}; expected an array of operations)"));
  EXPECT_THAT(error_for(with("preprocessing", json::parse(R"([{"type": "RandomFlip"}])"))),
              HasSubstr("spec.json: preprocessing[0]: RandomFlip needs an image, but the input has "
                        "no input_shape; "
                        "give the spec an \"input_shape\""));
  json spec = image_spec();
  spec["preprocessing"][1]["stddev"] = 2;
  EXPECT_THAT(error_for(spec),
              HasSubstr("spec.json: preprocessing[1].stddev: got 2; expected a number in [0, 1]"));
  spec["preprocessing"] = json::parse(R"([{"type": "RandomFlip", "mdoe": "vertical"}])");
  EXPECT_THAT(error_for(spec),
              HasSubstr(R"(spec.json: preprocessing[0].mdoe: unknown key (did you mean "mode"?); )"
                        "allowed keys: type, mode"));
}

// ---- Device share ---------------------------------------------------------------

TEST(Spec, DeviceSharesParseAndWriteBack) {
  const ModelSpec both = parse(with("device", {{"sms", 16}, {"sm_share", 25}}));
  EXPECT_EQ(both.device_share, (DeviceShare{16, 25}));
  EXPECT_EQ(parse(with("device", {{"sm_share", 100}})).device_share, (DeviceShare{{}, 100}));
  EXPECT_EQ(to_json(both)["device"], json({{"sms", 16}, {"sm_share", 25}}));
  EXPECT_FALSE(to_json(parse(with("device", json::object()))).contains("device"));  // none asked
  EXPECT_EQ(parse(to_json(both)).device_share, both.device_share);
}

TEST(Spec, DeviceShareErrorsNameTheFieldAndValue) {
  EXPECT_THAT(error_for(with("device", {{"sms", 0}})),
              HasSubstr("spec.json: device.sms: got 0; expected a positive integer"));
  EXPECT_THAT(error_for(with("device", {{"sms", 1025}})),
              HasSubstr("device.sms: got 1025; expected a positive integer no larger than 1024"));
  EXPECT_THAT(
      error_for(with("device", {{"sm_share", 101}})),
      HasSubstr("device.sm_share: got 101; expected a positive integer no larger than 100"));
  EXPECT_THAT(error_for(with("device", {{"sm_share", 12.5}})),
              HasSubstr("device.sm_share: got 12.5; expected a positive integer"));
  EXPECT_THAT(error_for(with("device", {{"sm", 8}})),
              HasSubstr("device.sm: unknown key (did you mean \"sms\"?)"));
  EXPECT_THAT(error_for(with("device", 0)),
              HasSubstr("spec.json: device: got 0; expected an object with keys sms, sm_share"));
}

TEST(Spec, PipelineErrorsNameTheFieldAndValue) {
  EXPECT_THAT(
      error_for(with("pipeline", 4)),
      HasSubstr("spec.json: pipeline: got 4; expected an object with keys workers, prefetch"));
  EXPECT_THAT(error_for(with("pipeline", {{"workers", 0}})),
              HasSubstr("spec.json: pipeline.workers: got 0; expected a positive integer"));
  EXPECT_THAT(error_for(with("pipeline", {{"workers", 65}})),
              HasSubstr("pipeline.workers: got 65; expected a positive integer no larger than 64"));
  EXPECT_THAT(error_for(with("pipeline", {{"workers", "2"}})),
              HasSubstr("pipeline.workers: got \"2\"; expected a positive integer"));
  EXPECT_THAT(error_for(with("pipeline", {{"workers", 2.0}})),
              HasSubstr("pipeline.workers: got 2.0; expected a positive integer"));
  EXPECT_THAT(
      error_for(with("pipeline", {{"prefetch", 65}})),
      HasSubstr(
          "spec.json: pipeline.prefetch: got 65; expected a positive integer no larger than 64"));
  EXPECT_THAT(error_for(with("pipeline", {{"prefetch", true}})),
              HasSubstr("pipeline.prefetch: got true; expected a positive integer"));
  EXPECT_THAT(
      error_for(with("pipeline", {{"worker", 2}})),
      HasSubstr(
          R"(spec.json: pipeline.worker: unknown key (did you mean "workers"?); allowed keys: )"
          "workers, prefetch"));
}

// What a child is sent reads back to an equal spec: every key, the new ones included, and a spec
// without an input_shape or preprocessing writes neither.
TEST(Spec, ToJsonReadsBackToAnEqualSpec) {
  json full = image_spec();
  full["name"] = "round-trip";
  full["optimizer"] = {{"name", "adam"}, {"learning_rate", 0.003}, {"beta_1", 0.85}};
  full["fit"] = {{"epochs", 3}, {"batch_size", 16}, {"validation_split", 0.2}, {"shuffle", false}};
  full["seed"] = 9;
  full["memory"] = {{"limit", "8MiB"}, {"mode", "reserve"}};
  full["preprocessing"] = json::parse(R"([
    {"type": "RandomFlip", "mode": "horizontal_and_vertical"},
    {"type": "RandomTranslation", "height_factor": 0.1, "width_factor": [-0.2, 0.3], "fill_mode": "constant",
     "fill_value": 0.5},
    {"type": "RandomZoom", "height_factor": [-0.2, 0.1], "interpolation": "nearest"},
    {"type": "RandomContrast", "factor": 0.2, "value_range": [0, 1]},
    {"type": "GaussianNoise", "stddev": 0.05},
    {"type": "HostWork", "microseconds_per_sample": 20}])");
  for (const json& written : {minimal(), full}) {
    SCOPED_TRACE(written.dump());
    const ModelSpec spec = parse(written);
    const json sent = to_json(spec);
    const ModelSpec back = parse(json::parse(sent.dump()));  // as a child reads it
    EXPECT_TRUE(back == spec);
    EXPECT_EQ(to_json(back), sent);
    EXPECT_EQ(sent.contains("input_shape"), written.contains("input_shape"));
    EXPECT_EQ(sent.contains("preprocessing"), written.contains("preprocessing"));
    EXPECT_EQ(sent["pipeline"], written.value("pipeline", json{{"workers", 1}, {"prefetch", 2}}));
  }
}

// ---- Unknown keys ---------------------------------------------------------------

TEST(Spec, UnknownTopLevelKey) {
  EXPECT_THAT(
      error_for(with("seeds", 1)),
      AllOf(HasSubstr("spec.json: seeds: unknown key (did you mean \"seed\"?); allowed keys: "),
            HasSubstr(
                "name, data, input, layers, loss, metrics, targets, optimizer, fit, seed, memory, "
                "input_shape, preprocessing, pipeline")));
}

TEST(Spec, UnknownLayerKey) {
  json spec = minimal();
  spec["layers"][1]["unit"] = 3;  // beside its units: no typo of them
  EXPECT_THAT(error_for(spec), AllOf(HasSubstr("layers[1].unit: unknown key; allowed keys"),
                                     HasSubstr("units, activation, use_bias"), HasSubstr("type")));
}

TEST(Spec, UnknownOptimizerKey) {
  EXPECT_THAT(
      error_for(with("optimizer", {{"name", "adam"}, {"lr", 0.1}})),
      AllOf(
          HasSubstr("optimizer.lr: unknown key; allowed keys"),  // too far from any to guess
          HasSubstr(
              "learning_rate, weight_decay, clipnorm, clipvalue, global_clipnorm, beta_1, beta_2, "
              "epsilon, amsgrad")));
  EXPECT_THAT(error_for(with("optimizer", {{"name", "sgd"}, {"nesterovv", true}})),
              AllOf(HasSubstr("optimizer.nesterovv: unknown key (did you mean \"nesterov\"?)"),
                    HasSubstr("momentum, nesterov")));
}

TEST(Spec, UnknownFitKey) {
  EXPECT_THAT(error_for(with("fit", {{"epoch", 3}})),
              AllOf(HasSubstr("fit.epoch: unknown key (did you mean \"epochs\"?); allowed keys"),
                    HasSubstr("epochs, batch_size, validation_split, shuffle")));
}

// A near miss of a key the object already has is no guess: {"epochs": 2, "epoch": 3} is not a typo
// of epochs.
TEST(Spec, AKeyAlreadyGivenIsNotSuggested) {
  EXPECT_THAT(error_for(with("fit", {{"epochs", 2}, {"epoch", 3}})),
              HasSubstr("fit.epoch: unknown key; allowed keys"));
  EXPECT_THAT(error_for(with("optimizer", {{"name", "adam"}, {"learnig_rate", 0.1}})),
              HasSubstr("optimizer.learnig_rate: unknown key (did you mean \"learning_rate\"?)"));
}

TEST(Spec, UnknownMemoryKey) {
  EXPECT_THAT(error_for(with("memory", {{"limits", "1MiB"}})),
              AllOf(HasSubstr("memory.limits: unknown key (did you mean \"limit\"?)"),
                    HasSubstr("limit, mode")));
}

TEST(Spec, UnknownKeyWithControlCharactersIsQuoted) {
  EXPECT_THAT(error_for(with("bad\nkey", 1)), HasSubstr("\"bad\\nkey\": unknown key"));
}

TEST(Spec, KeyOfTheOtherOptimizerRejected) {
  EXPECT_THAT(
      error_for(with("optimizer", {{"name", "adam"}, {"momentum", 0.9}})),
      AllOf(HasSubstr("optimizer.momentum: only for sgd, rmsprop"),
            HasSubstr(
                "adam takes beta_1, beta_2, epsilon, amsgrad and learning_rate, weight_decay")));
  EXPECT_THAT(error_for(with("optimizer", {{"name", "sgd"}, {"beta_1", 0.9}})),
              AllOf(HasSubstr("optimizer.beta_1: only for adam, adamw, adamax, nadam, lion"),
                    HasSubstr("sgd takes momentum, nesterov and learning_rate")));
  EXPECT_THAT(
      error_for(with("optimizer", {{"name", "sgd"}, {"epsilon", 1e-8}})),
      HasSubstr("optimizer.epsilon: only for adam, rmsprop, adamw, adagrad, adamax, nadam"));
  EXPECT_THAT(error_for(with("optimizer", {{"name", "adam"}, {"rho", 0.9}})),
              HasSubstr("optimizer.rho: only for rmsprop"));
}

// ---- Missing and wrongly typed values --------------------------------------------

TEST(Spec, TopLevelNotAnObject) {
  EXPECT_THAT(error_for(json::array({1, 2})),
              AllOf(HasSubstr("spec.json: top level: got [1,2]"), HasSubstr("input")));
}

TEST(Spec, RequiredKeysMissing) {
  for (const char* key : {"input", "layers", "loss"}) {
    json spec = minimal();
    spec.erase(key);
    EXPECT_THAT(error_for(spec),
                HasSubstr(std::string("spec.json: ") + key + ": missing; expected "));
  }
}

TEST(Spec, NameAndDataMustBeNonEmptyStrings) {
  EXPECT_THAT(error_for(with("name", "")),
              HasSubstr("name: got \"\"; expected a non-empty string"));
  EXPECT_THAT(error_for(with("name", 5)), HasSubstr("name: got 5"));
  EXPECT_THAT(error_for(with("data", "")),
              HasSubstr("data: got \"\"; expected a non-empty string"));
  EXPECT_THAT(error_for(with("data", nullptr)), HasSubstr("data: got null"));
}

TEST(Spec, InputWrongType) {
  EXPECT_THAT(error_for(with("input", "784")),
              HasSubstr("input: got \"784\"; expected a positive integer"));
}

TEST(Spec, LayersMustBeANonEmptyArray) {
  EXPECT_THAT(error_for(with("layers", json::array())),
              HasSubstr("layers: got []; expected a non-empty array"));
  EXPECT_THAT(error_for(with("layers", {{"units", 3}})), HasSubstr("layers: got"));
}

TEST(Spec, LayerMustBeAnObject) {
  json spec = minimal();
  spec["layers"][0] = 8;
  EXPECT_THAT(error_for(spec),
              AllOf(HasSubstr("layers[0]: got 8; expected a layer: an object"), HasSubstr("type")));
}

TEST(Spec, LayerUnitsMissing) {
  json spec = minimal();
  spec["layers"][0].erase("units");
  EXPECT_THAT(error_for(spec), HasSubstr("layers[0].units: missing; expected a positive integer"));
}

TEST(Spec, LayerUnitsWrongType) {
  json spec = minimal();
  spec["layers"][0]["units"] = "8";
  EXPECT_THAT(error_for(spec),
              HasSubstr("layers[0].units: got \"8\"; expected a positive integer"));
}

TEST(Spec, LayerTypeOutOfScopeOrUnknown) {
  json spec = minimal();
  spec["layers"][0]["type"] = "conv2d";
  EXPECT_THAT(error_for(spec),
              AllOf(HasSubstr("layers[0].type: conv2d is not a layer multifit trains"),
                    HasSubstr("use Dense"), HasSubstr("Dense, Dropout, BatchNormalization")));
  spec["layers"][0]["type"] = "Dens";
  EXPECT_THAT(error_for(spec),
              AllOf(HasSubstr("layers[0].type: unknown layer \"Dens\" (did you mean \"Dense\"?)"),
                    HasSubstr("known: Dense, Dropout, BatchNormalization, Activation, Flatten")));
}

TEST(Spec, ActivationUnknown) {
  json spec = minimal();
  spec["layers"][0]["activation"] = "hard_silu";  // Keras has it; multifit does not
  EXPECT_THAT(
      error_for(spec),
      AllOf(HasSubstr("layers[0].activation: got \"hard_silu\""),
            HasSubstr("linear, relu, sigmoid, tanh, softmax, gelu, swish, elu, selu, softplus, "
                      "leaky_relu, mish, softsign, silu")));
}

// A name that differs from a known one in its digits alone is another function, not a typo of it:
// Keras's relu6 is not relu, so no "did you mean" points there.
TEST(Spec, AVariantIsNotTakenForATypo) {
  json spec =
      with("layers", json::array({{{"units", 2}, {"activation", "relu6"}}, {{"units", 1}}}));
  EXPECT_THAT(error_for(spec), AllOf(HasSubstr("got \"relu6\";"), Not(HasSubstr("did you mean"))));
  spec["layers"][0]["activation"] = "reul";
  EXPECT_THAT(error_for(spec), HasSubstr("(did you mean \"relu\"?)"));
}

TEST(Spec, ActivationWrongType) {
  json spec = minimal();
  spec["layers"][0]["activation"] = 1;
  EXPECT_THAT(error_for(spec), HasSubstr("layers[0].activation: got 1; expected one of linear"));
}

TEST(Spec, LossUnknown) {
  EXPECT_THAT(error_for(with("loss", "hinge")),
              AllOf(HasSubstr("loss: unknown loss \"hinge\""),
                    HasSubstr("known: mse, mae, binary_crossentropy, categorical_crossentropy, "
                              "sparse_categorical_crossentropy, huber, log_cosh, msle")));
  EXPECT_THAT(error_for(with("loss", "mean_squard_error")),
              HasSubstr("(did you mean \"mean_squared_error\"?)"));
  EXPECT_THAT(error_for(with("loss", 0)), HasSubstr("loss: got 0"));
}

// Keras's shorthand: a name alone means that optimizer with Keras's defaults.
TEST(Spec, NamesArePrintable) {
  EXPECT_THAT(error_for(with("name", "a\nb")), HasSubstr("name: a control character in the name"));
  EXPECT_THAT(error_for(with("name", "a\u001b[31m")), HasSubstr("use printable characters"));
  EXPECT_EQ(parse_model_spec(with("name", "café-1"), "spec.json").name, "café-1");
}

TEST(Spec, TargetsMatchTheOutputLayer) {
  json spec = minimal();  // softmax over 3 classes
  EXPECT_EQ(parse_model_spec(spec, "spec.json").targets, 1);
  spec["targets"] = 2;
  EXPECT_THAT(error_for(spec),
              HasSubstr("targets: sparse_categorical_crossentropy takes one label column"));
  spec["loss"] = "mse";
  spec["layers"][1]["activation"] = "linear";
  EXPECT_THAT(error_for(spec),
              HasSubstr("targets: got 2, but the output layer has 3 units; expected 3"));
  spec["targets"] = 3;
  EXPECT_EQ(parse_model_spec(spec, "spec.json").targets, 3);
}

TEST(Spec, OptimizerByNameAlone) {
  EXPECT_EQ(parse_model_spec(with("optimizer", "adam"), "spec.json").optimizer.learning_rate,
            1e-3f);
  const OptimizerSpec sgd = parse_model_spec(with("optimizer", "sgd"), "spec.json").optimizer;
  EXPECT_EQ(sgd.kind, OptimizerKind::sgd);
  EXPECT_EQ(sgd.learning_rate, 0.01f);
  EXPECT_EQ(parse_model_spec(with("optimizer", "rmsprop"), "spec.json").optimizer.kind,
            OptimizerKind::rmsprop);
  EXPECT_THAT(error_for(with("optimizer", "adafactor")),  // Keras has it; multifit does not
              AllOf(HasSubstr("optimizer: unknown optimizer \"adafactor\""),
                    HasSubstr("known: adam, sgd, rmsprop, adamw, adagrad, adamax, nadam, lion")));
  EXPECT_THAT(error_for(with("optimizer", 3)),
              HasSubstr("expected an optimizer: its name, an object with \"name\""));
}

TEST(Spec, OptimizerNameMissing) {
  EXPECT_THAT(error_for(with("optimizer", {{"learning_rate", 0.1}})),
              HasSubstr("optimizer.name: missing; expected the name of an optimizer"));
}

TEST(Spec, OptimizerNameUnknown) {
  EXPECT_THAT(error_for(with("optimizer", {{"name", "rmsprp"}})),
              HasSubstr("optimizer.name: unknown optimizer \"rmsprp\" (did you mean \"rmsprop\"?); "
                        "known: adam, sgd"));
}

TEST(Spec, LearningRateWrongType) {
  EXPECT_THAT(error_for(with("optimizer", {{"name", "adam"}, {"learning_rate", "0.1"}})),
              HasSubstr("optimizer.learning_rate: got \"0.1\"; expected a finite number > 0"));
}

TEST(Spec, FitNotAnObject) {
  EXPECT_THAT(error_for(with("fit", 10)),
              AllOf(HasSubstr("fit: got 10; expected an object"), HasSubstr("epochs")));
}

TEST(Spec, EpochsWrongType) {
  EXPECT_THAT(error_for(with("fit", {{"epochs", "ten"}})),
              HasSubstr("fit.epochs: got \"ten\"; expected a whole number from 0 to 2147483647"));
}

TEST(Spec, ShuffleMustBeABoolean) {
  EXPECT_THAT(error_for(with("fit", {{"shuffle", "yes"}})),
              HasSubstr("fit.shuffle: got \"yes\"; expected true or false"));
  EXPECT_THAT(error_for(with("fit", {{"shuffle", 1}})), HasSubstr("fit.shuffle: got 1"));
}

TEST(Spec, ValidationSplitWrongType) {
  EXPECT_THAT(error_for(with("fit", {{"validation_split", "0.1"}})),
              HasSubstr("fit.validation_split: got \"0.1\""));
}

TEST(Spec, SeedMustBeANonNegativeInteger) {
  EXPECT_THAT(error_for(with("seed", -1)),
              HasSubstr("seed: got -1; expected a non-negative integer"));
  EXPECT_THAT(error_for(with("seed", 1.5)), HasSubstr("seed: got 1.5"));
  EXPECT_THAT(error_for(with("seed", "42")), HasSubstr("seed: got \"42\""));
}

TEST(Spec, BooleansAreNotNumbers) {
  EXPECT_THAT(error_for(with("fit", {{"epochs", true}})), HasSubstr("fit.epochs: got true"));
  EXPECT_THAT(error_for(with("seed", false)), HasSubstr("seed: got false"));
  EXPECT_THAT(error_for(with("optimizer", {{"name", "sgd"}, {"learning_rate", true}})),
              HasSubstr("optimizer.learning_rate: got true"));
}

TEST(Spec, IntegersWrittenAsFloatsRejected) {
  EXPECT_THAT(error_for(with("fit", {{"batch_size", 10.5}})),
              HasSubstr("fit.batch_size: got 10.5"));
  json spec = json::parse(R"({"input": 784.0, "layers": [{"units": 1}], "loss": "mse"})");
  EXPECT_THAT(error_for(spec), HasSubstr("input: got 784.0; expected a positive integer"));
}

TEST(Spec, IntegersOutOfIntRangeRejected) {
  EXPECT_THAT(
      error_for(with("fit", {{"epochs", 3000000000}})),
      HasSubstr("fit.epochs: got 3000000000; expected a whole number from 0 to 2147483647"));
  EXPECT_THAT(error_for(json::parse(
                  R"({"input": 18446744073709551615, "layers": [{"units": 1}], "loss": "mse"})")),
              HasSubstr("input: got 18446744073709551615"));
}

TEST(Spec, NonPositiveSizesRejected) {
  EXPECT_THAT(error_for(with("input", 0)), HasSubstr("input: got 0; expected a positive integer"));
  json spec = minimal();
  spec["layers"][0]["units"] = -5;
  EXPECT_THAT(error_for(spec), HasSubstr("layers[0].units: got -5"));
  EXPECT_THAT(error_for(with("fit", {{"epochs", -1}})), HasSubstr("fit.epochs: got -1"));
  // Keras allows 0
  EXPECT_EQ(parse_model_spec(with("fit", {{"epochs", 0}}), "spec.json").fit.epochs, 0);
  EXPECT_THAT(error_for(with("fit", {{"batch_size", -1}})), HasSubstr("fit.batch_size: got -1"));
}

TEST(Spec, LongValuesAreCutShort) {
  const std::string message = error_for(with("layers", std::string(1000, 'x')));
  EXPECT_THAT(message, HasSubstr("layers: got \"xxx"));
  EXPECT_LT(message.size(), 200u);
}

// ---- Numeric ranges -------------------------------------------------------------

TEST(Spec, LearningRateMustBePositiveAndFinite) {
  // As text, so the numbers reach the parser as written; 1e-50 and 1e+39 only fail as floats.
  for (const std::string rate : {"0", "-0.1", "1e-50", "1e+39"}) {
    json spec = minimal();
    spec["optimizer"] = json::parse(R"({"name": "sgd", "learning_rate": )" + rate + "}");
    EXPECT_THAT(error_for(spec), HasSubstr("optimizer.learning_rate: got " + rate)) << rate;
  }
}

TEST(Spec, AdamBetasInUnitInterval) {
  EXPECT_THAT(error_for(with("optimizer", {{"name", "adam"}, {"beta_1", 1.0}})),
              HasSubstr("optimizer.beta_1: got 1.0; expected a number in [0, 1)"));
  EXPECT_THAT(error_for(with("optimizer", {{"name", "adam"}, {"beta_2", -0.1}})),
              HasSubstr("optimizer.beta_2: got -0.1"));
}

TEST(Spec, AdamEpsilonPositive) {
  EXPECT_THAT(error_for(with("optimizer", {{"name", "adam"}, {"epsilon", 0}})),
              HasSubstr("optimizer.epsilon: got 0; expected a finite number > 0"));
}

TEST(Spec, SgdMomentumInUnitInterval) {
  EXPECT_THAT(error_for(with("optimizer", {{"name", "sgd"}, {"momentum", 1}})),
              HasSubstr("optimizer.momentum: got 1; expected a number in [0, 1)"));
}

TEST(Spec, ValidationSplitInUnitInterval) {
  EXPECT_THAT(error_for(with("fit", {{"validation_split", 1}})),
              HasSubstr("fit.validation_split: got 1; expected a number in [0, 1)"));
  EXPECT_THAT(error_for(with("fit", {{"validation_split", -0.1}})),
              HasSubstr("fit.validation_split: got -0.1"));
}

// ---- Rules across fields --------------------------------------------------------

// A spec with these output activations per layer and this loss; every layer has `units` units.
json stack(std::vector<std::string> activations, const std::string& loss, int units = 3) {
  json spec = {{"input", 4}, {"loss", loss}, {"layers", json::array()}};
  for (const std::string& activation : activations)
    spec["layers"].push_back({{"units", units}, {"activation", activation}});
  return spec;
}

TEST(Spec, SoftmaxOnlyOnTheLastLayer) {
  EXPECT_THAT(
      error_for(stack({"softmax", "softmax"}, "sparse_categorical_crossentropy")),
      AllOf(HasSubstr("layers[0].activation: softmax on a hidden layer"), HasSubstr("last layer")));
}

TEST(Spec, SoftmaxOutputNeedsSparseCategoricalCrossentropy) {
  EXPECT_THAT(
      error_for(stack({"relu", "softmax"}, "mse")),
      AllOf(HasSubstr("loss: mse does not fit a softmax output (layers[1].activation is softmax)"),
            HasSubstr("sparse_categorical_crossentropy")));
  EXPECT_THAT(
      error_for(stack({"softmax"}, "binary_crossentropy")),
      HasSubstr(
          "loss: binary_crossentropy needs a sigmoid output, but layers[0].activation is softmax"));
}

TEST(Spec, SparseCategoricalCrossentropyNeedsSoftmaxOutput) {
  EXPECT_THAT(error_for(stack({"relu", "sigmoid"}, "sparse_categorical_crossentropy")),
              AllOf(HasSubstr("loss: sparse_categorical_crossentropy needs a softmax output"),
                    HasSubstr("layers[1].activation is sigmoid")));
}

TEST(Spec, SparseCategoricalCrossentropyNeedsTwoUnits) {
  EXPECT_THAT(error_for(stack({"softmax"}, "sparse_categorical_crossentropy", 1)),
              AllOf(HasSubstr("layers[0].units: a softmax output over 1 class"),
                    HasSubstr("at least 2 units")));
  EXPECT_EQ(parse(stack({"softmax"}, "sparse_categorical_crossentropy", 2)).outputs(), 2);
}

TEST(Spec, BinaryCrossentropyNeedsSigmoidOutput) {
  EXPECT_THAT(
      error_for(stack({"sigmoid", "relu"}, "binary_crossentropy")),
      HasSubstr(
          "loss: binary_crossentropy needs a sigmoid output, but layers[1].activation is relu"));
  EXPECT_THAT(error_for(stack({"linear"}, "binary_crossentropy")),
              HasSubstr("layers[0].activation is linear"));
  EXPECT_EQ(parse(stack({"relu", "sigmoid"}, "binary_crossentropy", 1)).loss,
            Loss::binary_crossentropy);
}

TEST(Spec, MseTakesAnyOutputButSoftmax) {
  for (const char* activation : {"linear", "relu", "sigmoid", "tanh"})
    EXPECT_EQ(parse(stack({"relu", activation}, "mse")).loss, Loss::mse) << activation;
}

// ---- Names ----------------------------------------------------------------------

TEST(Spec, ToStringNamesMatchTheSpecNames) {
  EXPECT_STREQ(to_string(Activation::linear), "linear");
  EXPECT_STREQ(to_string(Activation::relu), "relu");
  EXPECT_STREQ(to_string(Activation::sigmoid), "sigmoid");
  EXPECT_STREQ(to_string(Activation::tanh), "tanh");
  EXPECT_STREQ(to_string(Activation::softmax), "softmax");
  EXPECT_STREQ(to_string(Loss::mse), "mse");
  EXPECT_STREQ(to_string(Loss::binary_crossentropy), "binary_crossentropy");
  EXPECT_STREQ(to_string(Loss::sparse_categorical_crossentropy), "sparse_categorical_crossentropy");
  EXPECT_STREQ(to_string(OptimizerKind::adam), "adam");
  EXPECT_STREQ(to_string(OptimizerKind::sgd), "sgd");
  EXPECT_STREQ(to_string(PoolMode::grow), "grow");
  EXPECT_STREQ(to_string(PoolMode::reserve), "reserve");
}

// ---- Files ----------------------------------------------------------------------

// Spec files written into a fresh directory per test.
using SpecFile = test::TempDirTest;

// The message of the UserError with which load_model_spec refuses `file`; checks it is one line.
std::string load_error(const std::string& file) {
  SCOPED_TRACE("loading " + file);
  const std::string message = test::user_error([&] { load_model_spec(file); });
  EXPECT_THAT(message, Not(HasSubstr("\n")));
  return message;
}

TEST_F(SpecFile, MissingFile) {
  const std::string file = path("no-such-spec.json");
  EXPECT_EQ(load_error(file), file + ": no such file (the spec)");
}

TEST_F(SpecFile, DirectoryCannotBeRead) {
  EXPECT_THAT(load_error(dir().string()),
              StartsWith(dir().string() + ": is a folder; the spec must be"));
}

// A device or a pipe would never end (or never start): refused before it is opened.
TEST_F(SpecFile, DevicesAndPipesAreRefusedUnread) {
  EXPECT_THAT(load_error("/dev/zero"),
              StartsWith("/dev/zero: is a device; the spec must be a regular file"));
  const std::string fifo = path("pipe.json");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(load_error(fifo), StartsWith(fifo + ": is a pipe or socket"));
}

TEST_F(SpecFile, TooLargeIsRefusedUnread) {
  const std::string big = path("big.json");
  std::filesystem::resize_file(write("big.json", ""), (uintmax_t(16) << 20) + 1);
  EXPECT_THAT(load_error(big),
              HasSubstr("is 16.00 MiB (16777217 bytes) long; the spec must be a regular file of "
                        "at most 16.00 MiB"));
}

TEST_F(SpecFile, InvalidJsonNamesTheBytePosition) {
  // The stray '}' is the 31st byte (nlohmann counts from 1).
  const std::string file = write("invalid-spec.json", "{\n  \"input\": 4,\n  \"layers\": [\n}\n");
  EXPECT_THAT(load_error(file),
              AllOf(StartsWith(file + ": invalid JSON at byte 31: "), HasSubstr("line 4")));
}

// A number JSON allows but a double cannot hold is the file's fault too, not a machine failure.
TEST_F(SpecFile, ANumberPastADoublesRangeIsInvalidJson) {
  const std::string file = write("huge-spec.json", R"({"input": 4, "seed": 1e400})");
  EXPECT_THAT(load_error(file), AllOf(StartsWith(file + ": invalid JSON: "), HasSubstr("1e400"),
                                      HasSubstr("within a double's range")));
}

TEST_F(SpecFile, EmptyFileIsInvalidJson) {
  const std::string file = write("empty-spec.json", "");
  EXPECT_THAT(load_error(file), StartsWith(file + ": invalid JSON at byte "));
}

TEST_F(SpecFile, ValidFileLoads) {
  const std::string file = write("valid-spec.json", minimal().dump(2));
  EXPECT_EQ(load_model_spec(file).outputs(), 3);
}

TEST_F(SpecFile, SpecErrorsNameTheFile) {
  const std::string file = write("bad-spec.json", with("fit", {{"epochs", -1}}).dump());
  EXPECT_THAT(load_error(file), StartsWith(file + ": fit.epochs: got -1"));
}

TEST_F(SpecFile, ExamplesAreValid) {
  const std::filesystem::path examples = std::filesystem::path(MF_SOURCE_DIR) / "examples";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(examples)) {
    if (entry.path().extension() != ".json") continue;
    // A spec is a sweep of one, so every example, spec or sweep, loads as a sweep.
    const Sweep sweep = load_sweep(entry.path().string());
    for (const SweepEntry& model : sweep.models) EXPECT_EQ(model.error, "") << entry.path();
    ++checked;
  }
  EXPECT_GE(checked, 6);  // the examples shipped: specs and sweeps
}

}  // namespace
}  // namespace mf
