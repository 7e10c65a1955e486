#include "nn/sweep.h"

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
using testing::ElementsAre;
using testing::HasSubstr;
using testing::Not;
using testing::StartsWith;

// A small valid spec for a base or a list entry; each test changes what it is about.
json spec(const std::string& name = "m") {
  json out = json::parse(R"({
    "input": 4,
    "layers": [{"units": 8, "activation": "relu"}, {"units": 3, "activation": "softmax"}],
    "loss": "sparse_categorical_crossentropy"
  })");
  out["name"] = name;
  return out;
}

std::vector<std::string> names(const Sweep& sweep) {
  std::vector<std::string> out;
  for (const SweepEntry& model : sweep.models) out.push_back(model.name);
  return out;
}

// Every model parsed, and each spec carries its entry's name.
void expect_all_good(const Sweep& sweep) {
  for (const SweepEntry& model : sweep.models) {
    EXPECT_EQ(model.error, "") << model.name;
    ASSERT_TRUE(model.spec) << model.name;
    EXPECT_EQ(model.spec->name, model.name);
  }
}

// Sweep files written into a fresh directory per test.
class SweepFile : public test::TempDirTest {
 protected:
  std::string write_json(const std::string& name, const json& value) const {
    return write(name, value.dump(2));
  }

  // The message of the UserError with which load_sweep refuses `document`; checks it names the file
  // and is one line.
  std::string load_error(const json& document) const {
    const std::string file = write_json("sweep.json", document);
    SCOPED_TRACE("loading " + document.dump());
    const std::string message = test::user_error([&] { load_sweep(file); });
    EXPECT_THAT(message, StartsWith(file + ": "));
    EXPECT_THAT(message, Not(HasSubstr("\n")));
    return message;
  }
};

// ---- Grids -----------------------------------------------------------------------------

// A base whose model is a Keras config: the model axes would label models with what they never
// had, so they are refused; the fit's axes vary it as any base.
TEST_F(SweepFile, AKerasConfigBaseTakesTheFitsAxesAlone) {
  const json keras = json::parse(R"({"class_name": "Sequential", "config": {"layers": [
      {"class_name": "InputLayer", "config": {"batch_shape": [null, 4]}},
      {"class_name": "Dense", "config": {"units": 8, "activation": "relu"}},
      {"class_name": "Dense", "config": {"units": 1, "activation": "sigmoid"}}]},
    "compile_config": {"loss": "binary_crossentropy", "optimizer": "adam"}})");
  const json base = {{"data", "synthetic:teacher"}, {"keras_config", keras}};
  for (const char* axis : {"hidden", "units", "activation", "learning_rate"}) {
    const json values = std::string(axis) == "hidden"       ? json{json{4}, json{16}}
                        : std::string(axis) == "activation" ? json{"relu", "tanh"}
                                                            : json{2, 4};
    EXPECT_THAT(load_error({{"base", base}, {"grid", {{axis, values}}}}),
                HasSubstr("the base gives its model as keras_config"))
        << axis;
  }
  const Sweep sweep = load_sweep(write_json(
      "ok.json", {{"base", base}, {"grid", {{"seed", {1, 2}}, {"batch_size", {8, 16}}}}}));
  ASSERT_EQ(sweep.models.size(), 4u);
  expect_all_good(sweep);
  EXPECT_EQ(sweep.models[3].spec->fit.batch_size, 16);
  EXPECT_EQ(sweep.models[3].spec->layers[0].units, 8);
}

TEST_F(SweepFile, GridIsTheProductInTheFixedOrder) {
  // Written in another order: the axes still combine hidden, activation, ..., seed, the first
  // slowest.
  const std::string file = write_json(
      "grid.json",
      {{"name", "g"},
       {"base", spec("base")},
       {"grid",
        {{"seed", {1, 2}}, {"activation", {"tanh", "relu"}}, {"hidden", {{16}, {16, 8}}}}}});
  const Sweep sweep = load_sweep(file);
  EXPECT_EQ(sweep.name, "g");
  EXPECT_THAT(names(sweep),
              ElementsAre("base-h16-tanh-s1", "base-h16-tanh-s2", "base-h16-relu-s1",
                          "base-h16-relu-s2", "base-h16x8-tanh-s1", "base-h16x8-tanh-s2",
                          "base-h16x8-relu-s1", "base-h16x8-relu-s2"));
  expect_all_good(sweep);
  EXPECT_EQ(sweep.models[7].spec->seed, 2u);
}

TEST_F(SweepFile, GridNamesEveryAxisAfterTheSweepWhenTheBaseHasNoName) {
  json base = spec();
  base.erase("name");
  base["optimizer"] = "sgd";  // the shorthand still takes a learning rate
  const std::string file = write_json(
      "lr-grid.json",
      {{"base", base},
       {"grid", {{"epochs", {5}}, {"batch_size", {16}}, {"learning_rate", {0.001, 3e-4}}}}});
  const Sweep sweep = load_sweep(file);
  EXPECT_EQ(sweep.name, "lr-grid");  // the file's stem
  EXPECT_THAT(names(sweep), ElementsAre("lr-grid-lr0.001-b16-e5", "lr-grid-lr0.0003-b16-e5"));
  expect_all_good(sweep);
  const ModelSpec& model = *sweep.models[1].spec;
  EXPECT_EQ(model.optimizer.kind, OptimizerKind::sgd);
  EXPECT_FLOAT_EQ(model.optimizer.learning_rate, 3e-4f);
  EXPECT_EQ(model.fit.batch_size, 16);
  EXPECT_EQ(model.fit.epochs, 5);
}

TEST_F(SweepFile, HiddenAxisKeepsTheOutputLayerAndTakesTheActivations) {
  json base = spec();
  base["layers"] =
      json::parse(R"([{"units": 32, "activation": "tanh"}, {"units": 7, "activation": "relu"},
                                   {"units": 3, "activation": "softmax"}])");
  const Sweep sweep = load_sweep(
      write_json("h.json", {{"base", base}, {"grid", {{"hidden", {{5, 6}, json::array()}}}}}));
  EXPECT_THAT(names(sweep), ElementsAre("m-h5x6", "m-h0"));
  expect_all_good(sweep);
  const std::vector<LayerSpec>& layers = sweep.models[0].spec->layers;
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0].units, 5);
  EXPECT_EQ(layers[0].activation, Activation::tanh);  // the base's first layer's
  EXPECT_EQ(layers[1].units, 6);
  EXPECT_EQ(layers[1].activation, Activation::tanh);
  EXPECT_EQ(layers[2].units, 3);
  EXPECT_EQ(layers[2].activation, Activation::softmax);
  EXPECT_EQ(sweep.models[1].spec->layers.size(), 1u);  // no hidden layers: the output alone

  const Sweep relu =
      load_sweep(write_json("a.json", {{"base", base}, {"grid", {{"activation", {"relu"}}}}}));
  expect_all_good(relu);
  const std::vector<LayerSpec>& kept = relu.models[0].spec->layers;
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].activation, Activation::relu);
  EXPECT_EQ(kept[1].activation, Activation::relu);
  EXPECT_EQ(kept[2].activation, Activation::softmax);
}

// A Keras base's blocks survive both axes: each width copies the first hidden block (its Dense, and
// the BatchNormalization, Activation and Dropout after it), and the activation goes to the
// Activation layers where a block has one, to the Dense where it has none, never to another layer.
// Layers are known by their type as the parser reads it ("dense" is a Dense).
TEST_F(SweepFile, TheAxesKeepAKerasBasesBlocks) {
  json base = spec();
  base["layers"] = json::parse(R"([{"type": "dense", "units": 32, "input_shape": [4],
                                    "kernel_regularizer": "l2"},
                                   {"type": "BatchNormalization"}, {"type": "Activation", "activation": "relu"},
                                   {"type": "Dropout", "rate": 0.3},
                                   {"class_name": "Dense", "config": {"units": 8, "activation": "tanh"}},
                                   {"type": "Dense", "units": 3, "activation": "softmax"}])");
  const Sweep sweep = load_sweep(write_json(
      "k.json", {{"base", base}, {"grid", {{"hidden", {{5, 6}}}, {"activation", {"gelu"}}}}}));
  expect_all_good(sweep);
  const std::vector<LayerSpec>& layers = sweep.models[0].spec->layers;
  using K = LayerKind;
  const std::vector<K> kinds = {K::dense, K::batch_normalization, K::activation, K::dropout,
                                K::dense, K::batch_normalization, K::activation, K::dropout,
                                K::dense};
  ASSERT_EQ(layers.size(), kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) EXPECT_EQ(layers[i].kind, kinds[i]) << i;
  EXPECT_EQ(layers[0].units, 5);
  EXPECT_EQ(layers[4].units, 6);
  for (size_t dense : {0, 4}) {
    // its Activation layer has the axis's
    EXPECT_EQ(layers[dense].activation, Activation::linear) << dense;
    EXPECT_EQ(layers[dense].kernel_regularizer.l2, 0.01f) << dense;
  }
  EXPECT_EQ(layers[2].activation, Activation::gelu);
  EXPECT_EQ(layers[6].activation, Activation::gelu);
  EXPECT_DOUBLE_EQ(layers[7].rate, 0.3);
  EXPECT_EQ(layers[8].activation, Activation::softmax);

  // The activation axis alone: the Activation layer's, and the second Dense's (in Keras's
  // get_config() form), which no Activation layer follows.
  const Sweep alone =
      load_sweep(write_json("a.json", {{"base", base}, {"grid", {{"activation", {"elu"}}}}}));
  expect_all_good(alone);
  const std::vector<LayerSpec>& kept = alone.models[0].spec->layers;
  ASSERT_EQ(kept.size(), 6u);
  EXPECT_EQ(kept[0].activation, Activation::linear);
  EXPECT_EQ(kept[2].activation, Activation::elu);
  EXPECT_EQ(kept[4].activation, Activation::elu);
  EXPECT_EQ(kept[5].activation, Activation::softmax);
}

// ---- Lists -----------------------------------------------------------------------------

TEST_F(SweepFile, ListEntriesAreMergedOverTheBase) {
  json base = spec("unused");
  base["fit"] = {{"epochs", 4}, {"batch_size", 16}};
  base["seed"] = 9;
  const std::string file = write_json(
      "list.json",
      {{"base", base},
       {"models",
        {{{"name", "a"}, {"fit", {{"batch_size", 8}}}}, {{"name", "b"}, {"seed", nullptr}}}}});
  const Sweep sweep = load_sweep(file);
  EXPECT_EQ(sweep.name, "list");
  EXPECT_THAT(names(sweep), ElementsAre("a", "b"));
  expect_all_good(sweep);
  EXPECT_EQ(sweep.models[0].spec->fit.epochs, 4);  // merged into, not replaced
  EXPECT_EQ(sweep.models[0].spec->fit.batch_size, 8);
  EXPECT_EQ(sweep.models[0].spec->seed, 9u);
  EXPECT_EQ(sweep.models[1].spec->seed, 0u);  // null removes the base's key (RFC 7386)
}

TEST_F(SweepFile, StringEntriesAreSpecFilesBesideTheSweep) {
  std::filesystem::create_directories(dir() / "specs");
  std::filesystem::create_directories(dir() / "sweeps");
  write_json("specs/first.json", spec("first"));
  json unnamed = spec();
  unnamed.erase("name");
  write_json("sweeps/second.json", unnamed);
  const std::string file =
      write_json("sweeps/pair.json",
                 {{"base", {{"seed", 5}}},
                  {"models", {"../specs/first.json", "second.json", {{"name", "third"}}}}});
  // The object entry lacks most of a spec: it fails alone, the files still load.
  const Sweep sweep = load_sweep(file);
  // an unnamed file takes its stem
  EXPECT_THAT(names(sweep), ElementsAre("first", "second", "third"));
  for (int i : {0, 1}) {
    ASSERT_TRUE(sweep.models[i].spec) << sweep.models[i].error;
    EXPECT_EQ(sweep.models[i].spec->seed, 5u);  // the base is merged under files too
  }
  EXPECT_THAT(sweep.models[2].error, StartsWith(file + " models[2]: layers: missing"));
}

TEST_F(SweepFile, PlainSpecIsASweepOfOne) {
  const Sweep sweep = load_sweep(write_json("solo.json", spec("solo")));
  EXPECT_EQ(sweep.name, "solo");
  EXPECT_THAT(names(sweep), ElementsAre("solo"));
  expect_all_good(sweep);

  json bad = spec("bad");
  bad["fit"] = {{"epochs", -1}};
  const std::string file = write_json("bad.json", bad);
  const Sweep refused = load_sweep(file);
  ASSERT_EQ(refused.models.size(), 1u);
  EXPECT_EQ(refused.models[0].name, "bad");
  // as load_model_spec says it
  EXPECT_THAT(refused.models[0].error, StartsWith(file + ": fit.epochs: got -1"));
}

// ---- Bad models among good ones ----------------------------------------------------------

TEST_F(SweepFile, OneBadModelLeavesTheOthers) {
  json zero_units = spec("zero");
  zero_units["layers"][0]["units"] = 0;
  const std::string file = write_json(
      "mixed.json",
      {{"name", "mixed"}, {"models", {spec("a"), zero_units, spec("c"), 5, "missing.json"}}});
  const Sweep sweep = load_sweep(file);
  EXPECT_THAT(names(sweep), ElementsAre("a", "zero", "c", "mixed-3", "missing"));
  for (int good : {0, 2}) EXPECT_TRUE(sweep.models[good].spec) << sweep.models[good].error;
  for (int bad : {1, 3, 4}) EXPECT_FALSE(sweep.models[bad].spec);
  EXPECT_THAT(sweep.models[1].error,
              StartsWith(file + " models[1]: layers[0].units: got 0; expected a positive"));
  EXPECT_EQ(
      sweep.models[3].error,
      file + " models[3]: got 5; expected a model spec (an object) or the path of a spec file");
  EXPECT_EQ(sweep.models[4].error,
            file + " models[4]: " + path("missing.json") + ": no such file (the spec)");
  for (const SweepEntry& model : sweep.models) EXPECT_THAT(model.error, Not(HasSubstr("\n")));
}

TEST_F(SweepFile, OneBadGridValueLeavesTheOthers) {
  const std::string file = write_json(
      "grid.json",
      {{"base", spec()}, {"grid", {{"hidden", {{4}, {0}}}, {"learning_rate", {0.01, -1}}}}});
  const Sweep sweep = load_sweep(file);
  EXPECT_THAT(names(sweep), ElementsAre("m-h4-lr0.01", "m-h4-lr-1", "m-h0-lr0.01", "m-h0-lr-1"));
  EXPECT_TRUE(sweep.models[0].spec);
  EXPECT_THAT(
      sweep.models[1].error,
      StartsWith(file + " grid (hidden [4], learning_rate -1): optimizer.learning_rate: got -1"));
  EXPECT_THAT(sweep.models[2].error,
              StartsWith(file + " grid (hidden [0], learning_rate 0.01): layers[0].units: got 0"));
}

// A problem no axis value changes is the file's, said once: not once per model of a large grid.
TEST_F(SweepFile, AProblemOfEveryGridModelIsTheFilesOnce) {
  json bad = spec();
  bad["loss"] = "hinge";
  const std::string message =
      load_error({{"base", bad}, {"grid", {{"seed", {1, 2, 3}}, {"learning_rate", {0.1, 0.2}}}}});
  EXPECT_THAT(message,
              HasSubstr(": all 6 models of the grid: loss: unknown loss \"hinge\"; known: "));
  // Where the problems differ by model, each model keeps its own (and the others would still run).
  const std::string file =
      write_json("grid.json", {{"base", spec()}, {"grid", {{"learning_rate", {-1, -2}}}}});
  const Sweep sweep = load_sweep(file);
  EXPECT_THAT(sweep.models[0].error,
              HasSubstr("learning_rate -1): optimizer.learning_rate: got -1"));
  EXPECT_THAT(sweep.models[1].error,
              HasSubstr("learning_rate -2): optimizer.learning_rate: got -2"));
  // A grid of one model keeps the model's own error.
  const Sweep one = load_sweep(write_json("one.json", {{"base", bad}, {"grid", {{"seed", {1}}}}}));
  EXPECT_THAT(one.models[0].error, HasSubstr("grid (seed 1): loss: unknown loss \"hinge\""));
}

TEST_F(SweepFile, RepeatedNamesAreRefused) {
  const std::string file =
      write_json("twice.json", {{"models", {spec("x"), spec("y"), spec("x")}}});
  const Sweep sweep = load_sweep(file);
  EXPECT_TRUE(sweep.models[1].spec);
  EXPECT_FALSE(sweep.models[2].spec);
  EXPECT_EQ(sweep.models[2].error,
            file + " models[2]: the name 'x' is also models[0]'s; give each model its own name");

  const Sweep grid =
      load_sweep(write_json("grid.json", {{"base", spec()}, {"grid", {{"seed", {1, 1}}}}}));
  EXPECT_TRUE(grid.models[0].spec);
  EXPECT_THAT(grid.models[1].error,
              HasSubstr("grid (seed 1): the name 'm-s1' is also grid (seed 1)'s"));
}

// ---- Problems with the file as a whole ---------------------------------------------------

TEST_F(SweepFile, MissingFileAndInvalidJson) {
  const std::string missing = path("none.json");
  EXPECT_EQ(test::user_error([&] { load_sweep(missing); }),
            missing + ": no such file (the sweep file)");
  const std::string invalid = write("invalid.json", "{\"models\": [");
  EXPECT_THAT(test::user_error([&] { load_sweep(invalid); }),
              StartsWith(invalid + ": invalid JSON at byte "));
  EXPECT_THAT(test::user_error([&] { load_sweep(dir().string()); }),
              HasSubstr(": is a folder; the sweep file must"));
}

TEST_F(SweepFile, TopLevelErrors) {
  EXPECT_THAT(load_error(json::array()), HasSubstr(": top level: got []; expected a sweep"));
  EXPECT_THAT(load_error({{"name", "s"}}),
              HasSubstr(": top level: no \"models\", \"grid\" or \"search\"; expected one"));
  EXPECT_THAT(
      load_error({{"models", json::array({spec()})}, {"grid", {{"seed", {1}}}}, {"base", spec()}}),
      HasSubstr(": top level: more than one of \"models\", \"grid\" and \"search\""));
  EXPECT_THAT(load_error({{"models", json::array({spec()})}, {"colour", "red"}}),
              HasSubstr(": colour: unknown key; allowed keys: name, base, models, grid"));
  EXPECT_THAT(load_error({{"models", json::array({spec()})}, {"name", ""}}),
              HasSubstr(": name: got \"\"; expected a non-empty"));
  EXPECT_THAT(load_error({{"models", json::array()}}),
              HasSubstr(": models: got []; expected a non-empty array"));
  EXPECT_THAT(load_error({{"models", json::array({spec()})}, {"base", 3}}),
              HasSubstr(": base: got 3; expected a model spec"));
}

TEST_F(SweepFile, AxisErrors) {
  EXPECT_THAT(load_error({{"base", spec()}, {"grid", {{"depth", {1}}}}}),
              HasSubstr(": grid.depth: unknown axis; allowed axes: hidden, units, activation, "
                        "dropout, learning_rate, "
                        "batch_size, seed, epochs"));
  EXPECT_THAT(load_error({{"base", spec()}, {"grid", {{"epoch", {1}}}}}),
              HasSubstr(": grid.epoch: unknown axis (did you mean \"epochs\"?); allowed axes: "));
  EXPECT_THAT(load_error({{"models", json::array({spec()})}, {"nmae", "x"}}),
              HasSubstr(": nmae: unknown key (did you mean \"name\"?); allowed keys: "));
  EXPECT_THAT(load_error({{"base", spec()}, {"grid", {{"seed", json::array()}}}}),
              HasSubstr(": grid.seed: got []; expected a non-empty array of values"));
  EXPECT_THAT(load_error({{"base", spec()}, {"grid", {{"seed", 1}}}}),
              HasSubstr(": grid.seed: got 1; expected"));
  EXPECT_THAT(
      load_error({{"base", spec()}, {"grid", {{"hidden", {{10}, 100}}}}}),
      HasSubstr(": grid.hidden[1]: got 100; expected an array of the hidden layers' widths"));
  EXPECT_THAT(load_error({{"base", spec()}, {"grid", json::object()}}),
              HasSubstr(": grid: got {}; expected"));
  EXPECT_THAT(load_error({{"grid", {{"seed", {1}}}}}),
              HasSubstr(": base: missing; a grid or a search varies a base spec"));
  json named = spec();
  named["name"] = 7;
  EXPECT_THAT(load_error({{"base", named}, {"grid", {{"seed", {1}}}}}),
              HasSubstr(": base.name: got 7; expected"));
}

TEST_F(SweepFile, AtMostAMillionModels) {
  std::vector<int> values(1025);  // 1025 x 1024 = 2^20 + 1024
  EXPECT_THAT(
      load_error(
          {{"base", spec()}, {"grid", {{"seed", values}, {"epochs", std::vector<int>(1024)}}}}),
      HasSubstr(": grid: the axes make more than 1048576 models; a sweep holds at most 1048576"));
  EXPECT_THAT(load_error({{"models", std::vector<json>((size_t(1) << 20) + 1, json::object())}}),
              HasSubstr(": models: 1048577 models; a sweep holds at most 1048576"));
  // 8 learning rates by 2048 seeds: a grid the old bound of 4096 refused
  std::vector<int> seeds(2048);
  for (int i = 0; i < 2048; ++i) seeds[size_t(i)] = i;
  const Sweep big = load_sweep(write_json(
      "big.json",
      {{"base", spec()},
       {"grid",
        {{"learning_rate", {1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3}}, {"seed", seeds}}}}));
  ASSERT_EQ(big.models.size(), 16384u);
  EXPECT_TRUE(std::all_of(big.models.begin(), big.models.end(),
                          [](const SweepEntry& e) { return e.error.empty(); }));
}

// ---- The examples ----------------------------------------------------------------------

TEST(SweepExamples, LoadWithoutErrors) {
  const std::filesystem::path examples = std::filesystem::path(MF_SOURCE_DIR) / "examples";
  const Sweep pair = load_sweep((examples / "seed-pair.json").string());
  EXPECT_THAT(names(pair), ElementsAre("binary-classifier", "regressor"));
  expect_all_good(pair);

  const Sweep grid = load_sweep((examples / "fashion-mnist-grid.json").string());
  ASSERT_EQ(grid.models.size(), 8u);
  EXPECT_EQ(grid.models.front().name, "fmnist-h10-tanh");
  EXPECT_EQ(grid.models.back().name, "fmnist-h100x10-relu");
  expect_all_good(grid);

  const Sweep tiny = load_sweep((examples / "tiny-sweep.json").string());
  ASSERT_EQ(tiny.models.size(), 32u);
  EXPECT_EQ(tiny.models.front().name, "tiny-lr0.001-s1");
  EXPECT_EQ(tiny.models.back().name, "tiny-lr0.03-s8");
  expect_all_good(tiny);
}

}  // namespace
}  // namespace mf
