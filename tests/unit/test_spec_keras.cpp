// The spec's Keras vocabulary (nn/spec.h, nn/keras_object.h): every layer, initializer,
// regularizer, optimizer, schedule, loss, metric and callback by Keras 3's names, keyword arguments
// and defaults, in each of the three forms (a name, an object of its settings, and Keras's
// {"class_name", "config"} as get_config() and serialize() write it), and the one-line refusals of
// what is out of scope or wrong.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nn/spec.h"
#include "runtime/error.h"
#include "test_support.h"

namespace mf {
namespace {

using nlohmann::json;
using testing::AllOf;
using testing::HasSubstr;
using testing::Not;
using testing::StartsWith;

ModelSpec parse(const json& spec) { return parse_model_spec(spec, "spec.json"); }

std::string error_for(const json& spec) {
  SCOPED_TRACE("spec " + spec.dump());
  const std::string message = test::user_error([&] { parse(spec); });
  EXPECT_THAT(message, StartsWith("spec.json: "));
  EXPECT_THAT(message, Not(HasSubstr("\n")));
  return message;
}

// 6 features -> the layers -> a softmax over 3 classes, sparse categorical cross-entropy.
json spec_with(const json& hidden, const json& extra = json::object()) {
  json layers = hidden;
  layers.push_back({{"type", "Dense"}, {"units", 3}, {"activation", "softmax"}});
  json spec = {{"input", 6}, {"layers", layers}, {"loss", "sparse_categorical_crossentropy"}};
  spec.update(extra);
  return spec;
}

// ---- Layers -------------------------------------------------------------------------------------

TEST(KerasLayers, EveryLayerByItsClassName) {
  const ModelSpec s = parse(spec_with(json::parse(R"([
      {"type": "Dense", "units": 16, "activation": "gelu", "use_bias": false},
      {"type": "Dropout", "rate": 0.25},
      {"type": "BatchNormalization", "momentum": 0.9, "epsilon": 0.01, "center": false},
      {"type": "Activation", "activation": "silu"},
      {"type": "Flatten"},
      {"type": "dense", "units": 8},
      {"type": "batch_normalization"}])")));
  ASSERT_EQ(s.layers.size(), 8u);
  EXPECT_EQ(s.layers[0].kind, LayerKind::dense);
  EXPECT_EQ(s.layers[0].activation, Activation::gelu);
  EXPECT_FALSE(s.layers[0].use_bias);
  EXPECT_EQ(s.layers[1].kind, LayerKind::dropout);
  EXPECT_EQ(s.layers[1].rate, 0.25);
  EXPECT_EQ(s.layers[2].kind, LayerKind::batch_normalization);
  EXPECT_EQ(s.layers[2].momentum, 0.9);  // as written: Keras takes 1 - momentum in double
  EXPECT_EQ(s.layers[2].epsilon, 0.01);
  EXPECT_FALSE(s.layers[2].center);
  EXPECT_TRUE(s.layers[2].scale);
  EXPECT_EQ(s.layers[3].kind, LayerKind::activation);
  EXPECT_EQ(s.layers[3].activation, Activation::swish) << "silu is Keras's other name for swish";
  EXPECT_EQ(s.layers[4].kind, LayerKind::flatten);
  EXPECT_EQ(s.layers[5].kind, LayerKind::dense) << "multifit's lowercase name of before";
  EXPECT_EQ(s.layers[6].kind, LayerKind::batch_normalization);
  EXPECT_EQ(s.layers[6].momentum, 0.99) << "Keras's default";
  EXPECT_EQ(s.layers[6].epsilon, 1e-3);
  EXPECT_EQ(s.width(3), 16);  // the layers after a Dense keep its width
  EXPECT_EQ(s.outputs(), 3);
}

// A Sequential model's layers as Keras 3's get_config() writes them, InputLayer first.
TEST(KerasLayers, GetConfigIsReadAsItIs) {
  const json layers = json::parse(R"([
    {"module": "keras.layers", "class_name": "InputLayer",
     "config": {"batch_shape": [null, 20], "dtype": "float32", "sparse": false, "ragged": false,
                "name": "input_layer", "optional": false}, "registered_name": null},
    {"module": "keras.layers", "class_name": "Dense",
     "config": {"name": "dense", "trainable": true,
                "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"},
                          "registered_name": null},
                "units": 64, "activation": "relu", "use_bias": true,
                "kernel_initializer": {"module": "keras.initializers", "class_name": "HeNormal",
                                       "config": {"seed": null}, "registered_name": null},
                "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {},
                                     "registered_name": null},
                "kernel_regularizer": {"module": "keras.regularizers", "class_name": "L2", "config": {"l2": 0.0001},
                                       "registered_name": null},
                "bias_regularizer": null, "kernel_constraint": null, "bias_constraint": null,
                "quantization_config": null},
     "registered_name": null, "build_config": {"input_shape": [null, 20]}},
    {"module": "keras.layers", "class_name": "BatchNormalization",
     "config": {"name": "batch_normalization", "trainable": true, "dtype": "float32", "axis": -1, "momentum": 0.99,
                "epsilon": 0.001, "center": true, "scale": true,
                "beta_initializer": {"class_name": "Zeros", "config": {}},
                "gamma_initializer": {"class_name": "Ones", "config": {}},
                "moving_mean_initializer": {"class_name": "Zeros", "config": {}},
                "moving_variance_initializer": {"class_name": "Ones", "config": {}},
                "beta_regularizer": null, "gamma_regularizer": null, "beta_constraint": null, "gamma_constraint": null,
                "synchronized": false, "renorm": false, "renorm_clipping": null, "renorm_momentum": 0.99}},
    {"module": "keras.layers", "class_name": "Dropout",
     "config": {"name": "dropout", "trainable": true, "dtype": "float32", "rate": 0.2, "seed": null, "noise_shape": null}},
    {"module": "keras.layers", "class_name": "Dense",
     "config": {"name": "dense_1", "units": 1, "activation": "sigmoid"}}])");
  const ModelSpec s = parse({{"layers", layers}, {"loss", "binary_crossentropy"}});
  EXPECT_EQ(s.input, 20) << "from the InputLayer's batch_shape";
  ASSERT_EQ(s.layers.size(), 4u) << "the InputLayer is the input's width, no layer";
  EXPECT_EQ(s.layers[0].kernel_initializer.kind, InitializerKind::he_normal);
  EXPECT_EQ(s.layers[0].kernel_regularizer.l2, 1e-4f);
  EXPECT_EQ(s.layers[1].kind, LayerKind::batch_normalization);
  EXPECT_EQ(s.layers[2].rate, 0.2);
  EXPECT_EQ(s.output_activation(), Activation::sigmoid);
}

TEST(KerasLayers, TheInputFromAFirstLayerMustAgreeWithInput) {
  EXPECT_EQ(parse(spec_with({{{"units", 4}, {"input_shape", {6}}}})).input, 6);
  json no_input = spec_with({{{"units", 4}, {"input_dim", 6}}});
  no_input.erase("input");
  EXPECT_EQ(parse(no_input).input, 6);
  EXPECT_THAT(error_for(spec_with({{{"units", 4}, {"input_shape", {7}}}})),
              HasSubstr("layers[0]: an input of 7 features, but input is 6"));
  EXPECT_THAT(error_for(spec_with({{{"units", 4}, {"input_shape", {28, 28}}}})),
              HasSubstr("layers[0]: an input of shape [28,28] read by a Dense layer; multifit's "
                        "rows are flat: put a Flatten first"));
  no_input["layers"][0].erase("input_dim");
  EXPECT_THAT(error_for(no_input),
              HasSubstr("input: missing; expected the number of features per row"));
}

TEST(KerasLayers, ALayerKerasHasAndMultifitDoesNotIsOneLineNamingTheNearest) {
  const struct {
    const char* type;
    const char* nearest;
  } cases[] = {{"Conv2D", "flatten each image into a row"},
               {"MaxPooling2D", "flatten each image into a row"},
               {"LSTM", "give each sequence as one flat row"},
               {"Embedding", "one-hot the indices"},
               {"LayerNormalization", "the nearest is BatchNormalization"},
               {"GaussianDropout", "the nearest is Dropout"},
               {"RandomFlip", "put it in \"preprocessing\""},
               {"LeakyReLU", "leaky_relu"}};
  for (const auto& c : cases) {
    const std::string e = error_for(spec_with({{{"type", c.type}}}));
    EXPECT_THAT(e, AllOf(HasSubstr(std::string("layers[0].type: ") + c.type +
                                   " is not a layer multifit trains"),
                         HasSubstr(c.nearest), HasSubstr("Dense, Dropout, BatchNormalization")))
        << c.type;
  }
  EXPECT_THAT(error_for(spec_with({{{"type", "Dropuot"}, {"rate", 0.1}}})),
              HasSubstr("unknown layer \"Dropuot\" (did you mean \"Dropout\"?)"));
}

TEST(KerasLayers, KerasActivationLayersAreActivations) {
  const ModelSpec s =
      parse(spec_with(json::parse(R"([{"units": 4}, {"type": "ReLU"}, {"type": "ELU"}])")));
  EXPECT_EQ(s.layers[1].kind, LayerKind::activation);
  EXPECT_EQ(s.layers[1].activation, Activation::relu);
  EXPECT_EQ(s.layers[2].activation, Activation::elu);
  EXPECT_THAT(
      error_for(spec_with(json::parse(R"([{"units": 4}, {"type": "ReLU", "max_value": 6}])"))),
      HasSubstr("layers[1].max_value: got 6; expected null: multifit's relu has no ceiling"));
}

TEST(KerasLayers, DropoutNeedsItsRateBelowOne) {
  EXPECT_THAT(error_for(spec_with({{{"type", "Dropout"}}})),
              HasSubstr("layers[0].rate: missing; expected a number"));
  EXPECT_THAT(
      error_for(spec_with({{{"type", "Dropout"}, {"rate", 1}}})),
      HasSubstr(
          "layers[0].rate: got 1; expected a number in [0, 1): a rate of 1 drops everything"));
  EXPECT_THAT(error_for(spec_with({{{"type", "Dropout"}, {"rate", -0.1}}})),
              HasSubstr("layers[0].rate: got -0.1"));
  // A Dense's keys on a Dropout: the message is about the layer.
  EXPECT_THAT(error_for(spec_with({{{"type", "Dropout"}, {"rate", 0.1}, {"units", 4}}})),
              AllOf(HasSubstr("layers[0].units: unknown key"), HasSubstr("allowed keys: rate")));
}

TEST(KerasLayers, KerasDefaultsMultifitKeepsAreRefusedOtherwiseSayingWhy) {
  EXPECT_THAT(
      error_for(spec_with({{{"units", 4}, {"trainable", false}}})),
      HasSubstr("layers[0].trainable: got false; expected true: multifit trains every layer"));
  EXPECT_THAT(
      error_for(spec_with({{{"units", 4}, {"dtype", "float16"}}})),
      HasSubstr(
          "layers[0].dtype: got \"float16\"; expected \"float32\": multifit computes in float32"));
  EXPECT_THAT(
      error_for(spec_with({{{"units", 4}, {"kernel_constraint", {{"class_name", "MaxNorm"}}}}})),
      HasSubstr("multifit applies no weight constraints"));
  EXPECT_THAT(error_for(spec_with({{{"type", "BatchNormalization"}, {"axis", 1}}})),
              HasSubstr("layers[0].axis: got 1; expected -1"));
  EXPECT_THAT(error_for(spec_with({{{"type", "Dropout"}, {"rate", 0.1}, {"noise_shape", {1, 4}}}})),
              HasSubstr("multifit drops each unit on its own"));
}

TEST(KerasLayers, TheLastLayerIsTheOutput) {
  EXPECT_THAT(
      error_for({{"input", 4},
                 {"loss", "mse"},
                 {"layers", {{{"units", 2}}, {{"type", "Dropout"}, {"rate", 0.1}}}}}),
      HasSubstr("layers[1]: a Dropout layer last; the last layer must be Dense or Activation"));
  EXPECT_THAT(error_for({{"input", 4},
                         {"loss", "mse"},
                         {"layers", {{{"type", "Activation"}, {"activation", "tanh"}}}}}),
              HasSubstr("layers: no Dense layer"));
  // A softmax after a linear Dense is the output's: the loss takes it.
  const ModelSpec s =
      parse({{"input", 4},
             {"loss", "sparse_categorical_crossentropy"},
             {"layers", {{{"units", 3}}, {{"type", "Activation"}, {"activation", "softmax"}}}}});
  EXPECT_EQ(s.output_activation(), Activation::softmax);
}

// ---- Initializers and regularizers -------------------------------------------------------------

TEST(KerasInitializers, EveryFormAndKind) {
  const ModelSpec s = parse(spec_with(json::parse(R"([
      {"units": 4, "kernel_initializer": "he_uniform", "bias_initializer": "ones"},
      {"units": 4, "kernel_initializer": {"class_name": "LecunNormal", "config": {"seed": 7}},
                   "bias_initializer": {"name": "constant", "value": 0.5}},
      {"units": 4, "kernel_initializer": {"name": "random_uniform", "minval": -0.1, "maxval": 0.2},
                   "bias_initializer": {"class_name": "TruncatedNormal", "config": {"mean": 0.0, "stddev": 0.1}}}])")));
  EXPECT_EQ(s.layers[0].kernel_initializer.kind, InitializerKind::he_uniform);
  EXPECT_EQ(s.layers[0].bias_initializer.kind, InitializerKind::ones);
  EXPECT_EQ(s.layers[1].kernel_initializer.kind, InitializerKind::lecun_normal);
  EXPECT_EQ(s.layers[1].bias_initializer.kind, InitializerKind::constant);
  EXPECT_EQ(s.layers[1].bias_initializer.a, 0.5);
  EXPECT_EQ(s.layers[2].kernel_initializer.a, -0.1);
  EXPECT_EQ(s.layers[2].kernel_initializer.b, 0.2);
  EXPECT_EQ(s.layers[2].bias_initializer.kind, InitializerKind::truncated_normal);
  EXPECT_EQ(s.layers[2].bias_initializer.b, 0.1);
  EXPECT_THAT(
      error_for(spec_with({{{"units", 4}, {"kernel_initializer", "glorot_unifrom"}}})),
      HasSubstr(
          "layers[0].kernel_initializer: unknown initializer \"glorot_unifrom\" (did you mean "
          "\"glorot_uniform\"?)"));
  EXPECT_THAT(
      error_for(spec_with(
          {{{"units", 4}, {"kernel_initializer", {{"name", "random_normal"}, {"stddev", -1}}}}})),
      HasSubstr("a negative stddev"));
}

TEST(KerasRegularizers, EveryFormAndKind) {
  const ModelSpec s = parse(spec_with(json::parse(R"([
      {"units": 4, "kernel_regularizer": "l2", "bias_regularizer": "l1"},
      {"units": 4, "kernel_regularizer": {"class_name": "L1L2", "config": {"l1": 1e-5, "l2": 1e-4}},
                   "activity_regularizer": {"name": "l2", "l2": 0.5}},
      {"units": 4, "kernel_regularizer": {"class_name": "L1L2", "config": {"l1": 1e-5}},
                   "bias_regularizer": {"name": "l1_l2", "l2": 1e-3}}])")));
  EXPECT_EQ(s.layers[0].kernel_regularizer.l2, 0.01f) << "Keras's default for \"l2\"";
  EXPECT_EQ(s.layers[0].kernel_regularizer.l1, 0.f);
  EXPECT_EQ(s.layers[0].bias_regularizer.l1, 0.01f);
  EXPECT_EQ(s.layers[1].kernel_regularizer.l1, 1e-5f);
  EXPECT_EQ(s.layers[1].kernel_regularizer.l2, 1e-4f);
  EXPECT_EQ(s.layers[1].activity_regularizer.l2, 0.5f);
  // Keras 3's L1L2(l1=0.0, l2=0.0): the factor not given adds nothing (Keras 2's l1_l2 had 0.01)
  EXPECT_EQ(s.layers[2].kernel_regularizer.l1, 1e-5f);
  EXPECT_EQ(s.layers[2].kernel_regularizer.l2, 0.f);
  EXPECT_EQ(s.layers[2].bias_regularizer.l1, 0.f);
  EXPECT_EQ(s.layers[2].bias_regularizer.l2, 1e-3f);
  EXPECT_THAT(
      error_for(spec_with({{{"units", 4}, {"kernel_regularizer", {{"name", "l2"}, {"l2", -1}}}}})),
      HasSubstr("layers[0].kernel_regularizer.l2: got -1; expected a finite number >= 0"));
  EXPECT_THAT(
      error_for(spec_with({{{"units", 4}, {"use_bias", false}, {"bias_regularizer", "l2"}}})),
      HasSubstr("a bias regularizer without a bias"));
  EXPECT_THAT(
      error_for(spec_with({{{"units", 4}, {"kernel_regularizer", "orthogonal_regularizer"}}})),
      HasSubstr("unknown regularizer \"orthogonal_regularizer\"; known: l1, l2, l1_l2"));
}

// ---- Optimizers and schedules ------------------------------------------------------------------

TEST(KerasOptimizers, EveryOptimizerWithKerasDefaults) {
  const auto optimizer = [](const json& o) {
    return parse(spec_with(json::array(), {{"optimizer", o}})).optimizer;
  };
  const OptimizerSpec rmsprop = optimizer("rmsprop");
  EXPECT_EQ(rmsprop.kind, OptimizerKind::rmsprop);
  EXPECT_EQ(rmsprop.learning_rate, 1e-3f);
  EXPECT_EQ(rmsprop.rho, 0.9);
  EXPECT_FALSE(rmsprop.centered);
  const OptimizerSpec adamw = optimizer("AdamW");
  EXPECT_EQ(adamw.kind, OptimizerKind::adamw);
  EXPECT_EQ(adamw.weight_decay, 0.004f) << "AdamW's default";
  EXPECT_EQ(optimizer("adagrad").initial_accumulator_value, 0.1f);
  EXPECT_EQ(optimizer("Nadam").kind, OptimizerKind::nadam);
  const OptimizerSpec lion = optimizer("Lion");
  EXPECT_EQ(lion.kind, OptimizerKind::lion);
  EXPECT_EQ(lion.beta_1, 0.9);
  EXPECT_EQ(lion.beta_2, 0.99) << "Lion's default, not Adam's";
  EXPECT_EQ(optimizer({{"name", "lion"}, {"beta_1", 1.0}}).beta_1, 1.0) << "Keras allows 1";
  EXPECT_EQ(optimizer("adamax").kind, OptimizerKind::adamax);
  const OptimizerSpec sgd =
      optimizer({{"name", "sgd"}, {"momentum", 0.9}, {"nesterov", true}, {"clipnorm", 1.0}});
  EXPECT_EQ(sgd.learning_rate, 0.01f);
  EXPECT_TRUE(sgd.nesterov);
  EXPECT_EQ(sgd.clip, ClipKind::norm);
  EXPECT_EQ(sgd.clip_value, 1.f);
  // As keras.optimizers.serialize writes it, bookkeeping and all.
  const OptimizerSpec serialized =
      optimizer(json::parse(R"({"module": "keras.optimizers", "class_name": "RMSprop",
      "config": {"name": "rm_sprop", "learning_rate": 0.002, "weight_decay": null, "clipnorm": null,
                 "global_clipnorm": 2.0, "clipvalue": null, "use_ema": false, "ema_momentum": 0.99,
                 "ema_overwrite_frequency": null, "loss_scale_factor": null, "gradient_accumulation_steps": null,
                 "rho": 0.8, "momentum": 0.5, "epsilon": 1e-07, "centered": true}, "registered_name": null})"));
  EXPECT_EQ(serialized.kind, OptimizerKind::rmsprop);
  EXPECT_EQ(serialized.learning_rate, 0.002f);
  EXPECT_EQ(serialized.clip, ClipKind::global_norm);
  EXPECT_EQ(serialized.rho, 0.8);
  EXPECT_EQ(serialized.momentum, 0.5f);
  EXPECT_TRUE(serialized.centered);
}

TEST(KerasOptimizers, RefusalsNameTheSettingAndWhy) {
  const auto error = [](const json& o) {
    return error_for(spec_with(json::array(), {{"optimizer", o}}));
  };
  EXPECT_THAT(error({{"name", "adam"}, {"clipnorm", 1}, {"clipvalue", 0.5}}),
              HasSubstr("optimizer.clipvalue: both clipnorm and clipvalue; Keras takes one of"));
  EXPECT_THAT(
      error({{"name", "adam"}, {"use_ema", true}}),
      HasSubstr("optimizer.use_ema: got true; expected false: multifit keeps no moving average"));
  EXPECT_THAT(error({{"name", "adamw"}, {"weight_decay", nullptr}}),
              HasSubstr("AdamW's weight decay"));
  EXPECT_THAT(error({{"name", "sgd"}, {"momentum", 1.0}}),
              HasSubstr("optimizer.momentum: got 1.0; expected a number in [0, 1)"));
  EXPECT_THAT(error({{"name", "adagrad"}, {"beta_1", 0.9}}),
              HasSubstr("optimizer.beta_1: only for adam, adamw"));
}

TEST(KerasSchedules, EveryScheduleInLearningRate) {
  const auto schedule = [](const json& s) {
    return *parse(
                spec_with(json::array(), {{"optimizer", {{"name", "sgd"}, {"learning_rate", s}}}}))
                .optimizer.schedule;
  };
  const ScheduleSpec exponential =
      schedule(json::parse(R"({"class_name": "ExponentialDecay", "config":
      {"initial_learning_rate": 0.1, "decay_steps": 100, "decay_rate": 0.96, "staircase": true, "name": "ExponentialDecay"}})"));
  EXPECT_EQ(exponential.kind, ScheduleKind::exponential_decay);
  EXPECT_EQ(exponential.decay_steps, 100);
  EXPECT_TRUE(exponential.staircase);
  const ScheduleSpec cosine =
      schedule(json::parse(R"({"name": "CosineDecay", "initial_learning_rate": 0.01,
      "decay_steps": 1000, "warmup_target": 0.1, "warmup_steps": 50})"));
  EXPECT_EQ(cosine.kind, ScheduleKind::cosine_decay);
  EXPECT_EQ(cosine.warmup_target, 0.1);
  EXPECT_EQ(cosine.warmup_steps, 50);
  // Keras's warm-up from nothing: CosineDecay(0.0, 1000, warmup_target=0.1, warmup_steps=50)
  const ScheduleSpec from_zero =
      schedule(json::parse(R"({"name": "CosineDecay", "initial_learning_rate": 0.0,
      "decay_steps": 1000, "warmup_target": 0.1, "warmup_steps": 50})"));
  EXPECT_EQ(from_zero.initial_learning_rate, 0.0);
  EXPECT_EQ(from_zero.warmup_target, 0.1);
  const ScheduleSpec piecewise = schedule(json::parse(R"({"class_name": "PiecewiseConstantDecay",
      "config": {"boundaries": [100, 200], "values": [0.1, 0.01, 0.001]}})"));
  EXPECT_EQ(piecewise.boundaries, (std::vector<int64_t>{100, 200}));
  const ScheduleSpec poly =
      schedule(json::parse(R"({"name": "PolynomialDecay", "initial_learning_rate": 0.1,
      "decay_steps": 10, "power": 2.0, "cycle": true})"));
  EXPECT_EQ(poly.end_learning_rate, 0.0001) << "Keras's default";
  EXPECT_TRUE(poly.cycle);
  EXPECT_EQ(
      schedule(json::parse(
                   R"({"name": "InverseTimeDecay", "initial_learning_rate": 0.1, "decay_steps": 10,
      "decay_rate": 0.5})"))
          .kind,
      ScheduleKind::inverse_time_decay);

  const auto error = [](const json& s) {
    return error_for(
        spec_with(json::array(), {{"optimizer", {{"name", "sgd"}, {"learning_rate", s}}}}));
  };
  EXPECT_THAT(error({{"name", "ExponentialDecay"},
                     {"initial_learning_rate", 0.1},
                     {"decay_steps", 0},
                     {"decay_rate", 0.5}}),
              HasSubstr("optimizer.learning_rate.decay_steps: got 0; expected a positive whole "
                        "number of optimizer steps"));
  EXPECT_THAT(
      error({{"name", "CosineDecay"}, {"initial_learning_rate", 0.0}, {"decay_steps", 10}}),
      HasSubstr("optimizer.learning_rate.initial_learning_rate: got 0.0; expected a finite number "
                "> 0 (0 only where a warm-up starts from it: with warmup_target)"));
  EXPECT_THAT(error({{"name", "ExponentialDecay"},
                     {"initial_learning_rate", 0.0},
                     {"decay_steps", 10},
                     {"decay_rate", 0.5}}),
              HasSubstr("initial_learning_rate: got 0.0; expected a finite number > 0"));
  EXPECT_THAT(
      error(json::parse(
          R"({"name": "PiecewiseConstantDecay", "boundaries": [10], "values": [0.1]})")),
      HasSubstr(
          "optimizer.learning_rate.values: got [0.1]; expected an array of 2 learning rates"));
  EXPECT_THAT(
      error(json::parse(
          R"({"name": "PiecewiseConstantDecay", "boundaries": [10, 5], "values": [1, 2, 3]})")),
      HasSubstr("optimizer.learning_rate.boundaries[1]: got 5; expected an increasing array"));
  EXPECT_THAT(error({{"name", "CosineDecayRestarts"},
                     {"initial_learning_rate", 0.1},
                     {"first_decay_steps", 10}}),
              HasSubstr("unknown learning-rate schedule \"CosineDecayRestarts\""));
}

// ---- Losses, metrics ----------------------------------------------------------------------------

TEST(KerasLosses, EveryLossAndItsSettings) {
  const auto loss_of = [](const json& loss, const char* output, int targets = 1) {
    json spec = {{"input", 4},
                 {"targets", targets},
                 {"loss", loss},
                 {"layers", {{{"units", 3}, {"activation", output}}}}};
    return parse(spec).loss;
  };
  const LossSpec cce =
      loss_of(json::parse(R"({"module": "keras.losses", "class_name": "CategoricalCrossentropy",
      "config": {"name": "categorical_crossentropy", "reduction": "sum_over_batch_size", "from_logits": false,
                 "label_smoothing": 0.1, "axis": -1}})"),
              "softmax", 3);
  EXPECT_EQ(cce.kind, Loss::categorical_crossentropy);
  EXPECT_EQ(cce.label_smoothing, 0.1);
  EXPECT_EQ(loss_of("categorical_crossentropy", "softmax", 1).kind, Loss::categorical_crossentropy)
      << "class indices";
  EXPECT_TRUE(
      loss_of({{"name", "sparse_categorical_crossentropy"}, {"from_logits", true}}, "linear")
          .from_logits);
  EXPECT_EQ(loss_of({{"name", "huber"}, {"delta", 2.5}}, "linear", 3).delta, 2.5);
  EXPECT_EQ(loss_of("mae", "linear", 3).kind, Loss::mean_absolute_error);
  EXPECT_EQ(loss_of("LogCosh", "tanh", 3).kind, Loss::log_cosh);
  EXPECT_EQ(loss_of("binary_crossentropy", "sigmoid", 3).kind, Loss::binary_crossentropy);
}

TEST(KerasLosses, AnOutputTheLossCannotReadIsRefused) {
  const auto error = [](const json& loss, const char* output) {
    return error_for(
        {{"input", 4}, {"loss", loss}, {"layers", {{{"units", 3}, {"activation", output}}}}});
  };
  EXPECT_THAT(
      error({{"name", "sparse_categorical_crossentropy"}, {"from_logits", true}}, "softmax"),
      HasSubstr("sparse_categorical_crossentropy from logits needs a linear output, but "
                "layers[0].activation is softmax"));
  EXPECT_THAT(error("binary_crossentropy", "linear"),
              HasSubstr("(or linear, with from_logits: true)"));
  EXPECT_THAT(error("huber", "softmax"), HasSubstr("huber does not fit a softmax output"));
  EXPECT_THAT(error({{"name", "mse"}, {"reduction", "sum"}}, "linear"),
              HasSubstr("loss.reduction: got \"sum\"; expected \"sum_over_batch_size\""));
  EXPECT_THAT(error({{"name", "mse"}, {"from_logits", true}}, "linear"),
              HasSubstr("loss.from_logits: unknown key"));
  EXPECT_THAT(error_for({{"input", 4},
                         {"targets", 2},
                         {"loss", "categorical_crossentropy"},
                         {"layers", {{{"units", 3}, {"activation", "softmax"}}}}}),
              HasSubstr("expected 3 (one-hot or soft labels) or 1 (class indices)"));
}

TEST(KerasMetrics, AccuracyResolvesByShapesAsInKeras) {
  const auto metrics = [](const json& spec) { return parse(spec).metric_list(); };
  json classifier = spec_with(json::array(), {{"metrics", {"accuracy", "acc"}}});
  EXPECT_EQ(metrics(classifier)[0].kind, Metric::sparse_categorical_accuracy);
  EXPECT_EQ(metrics(classifier)[1].name, "acc");
  json binary = {{"input", 4},
                 {"loss", "binary_crossentropy"},
                 {"metrics", {"accuracy"}},
                 {"layers", {{{"units", 1}, {"activation", "sigmoid"}}}}};
  EXPECT_EQ(metrics(binary)[0].kind, Metric::binary_accuracy);
  json multilabel = {{"input", 4},
                     {"targets", 3},
                     {"loss", "binary_crossentropy"},
                     {"metrics", {"accuracy"}},
                     {"layers", {{{"units", 3}, {"activation", "sigmoid"}}}}};
  EXPECT_EQ(metrics(multilabel)[0].kind, Metric::categorical_accuracy)
      << "Keras's rule: several outputs, as many targets";
  multilabel.erase("metrics");
  EXPECT_EQ(metrics(multilabel)[0].kind, Metric::binary_accuracy)
      << "without a list: the loss's own accuracy";
  json regression = {{"input", 4}, {"targets", 2}, {"loss", "mse"}, {"layers", {{{"units", 2}}}}};
  EXPECT_TRUE(metrics(regression).empty()) << "a regression loss reports no metric of its own";
  regression["metrics"] =
      json::parse(R"(["mae", {"class_name": "MeanSquaredError", "config": {"name": "mse"}},
                                          "mean_absolute_error"])");
  const std::vector<MetricSpec> listed = metrics(regression);
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].kind, Metric::mean_absolute_error);
  EXPECT_EQ(listed[1].name, "mse");
  EXPECT_EQ(listed[2].name, "mean_absolute_error") << "named as written";
}

TEST(KerasMetrics, RefusalsNameTheMetric) {
  EXPECT_THAT(error_for(spec_with(json::array(), {{"metrics", {"mae"}}})),
              HasSubstr("metrics[0]: mae compares each output with its own target, but the targets "
                        "are one class index"));
  EXPECT_THAT(error_for(spec_with(json::array(), {{"metrics", {"f1_score"}}})),
              AllOf(HasSubstr("metrics[0]: unknown metric \"f1_score\""),
                    HasSubstr("known: accuracy, acc, binary_accuracy")));
  EXPECT_THAT(error_for(spec_with(json::array(), {{"metrics", {"accuracy", "accuracy"}}})),
              HasSubstr("metrics[1]: \"accuracy\" is listed twice"));
  EXPECT_THAT(error_for(spec_with(json::array(), {{"metrics", "accuracy"}})),
              HasSubstr("metrics: got \"accuracy\"; expected an array"));
}

// keras.metrics.Precision and Recall, by name or as Keras's get_config() writes them; any
// threshold, top_k or class_id other than Keras's defaults is refused, and so are class-index
// targets, which have no output of their own to count.
TEST(KerasMetrics, PrecisionAndRecallAtKerasDefaults) {
  json binary = {{"input", 4},
                 {"targets", 3},
                 {"loss", "binary_crossentropy"},
                 {"layers", {{{"units", 3}, {"activation", "sigmoid"}}}}};
  binary["metrics"] =
      json::parse(R"(["precision", {"class_name": "Recall", "config": {"name": "rec",
      "thresholds": null, "top_k": null, "class_id": null, "dtype": "float32"}}])");
  const std::vector<MetricSpec> listed = parse(binary).metric_list();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].kind, Metric::precision);
  EXPECT_EQ(listed[0].name, "precision");
  EXPECT_EQ(listed[1].kind, Metric::recall);
  EXPECT_EQ(listed[1].name, "rec");
  binary["metrics"] =
      json::parse(R"([{"class_name": "Precision", "config": {"thresholds": 0.3}}])");
  EXPECT_THAT(error_for(binary),
              HasSubstr("metrics[0].config.thresholds: got 0.3; expected null or 0.5"));
  binary["metrics"] =
      json::parse(R"([{"class_name": "Precision", "config": {"thresholds": 0.5}}])");
  EXPECT_EQ(parse(binary).metric_list()[0].kind, Metric::precision);
  EXPECT_THAT(error_for(spec_with(json::array(), {{"metrics", {"recall"}}})),
              HasSubstr("metrics[0]: recall compares each output with its own target, but the "
                        "targets are one class index"));
}

// keras.metrics.AUC, by name or as Keras's get_config() writes it at its defaults; another curve,
// number of thresholds or labelling is refused by name, and so is a model of more than one output.
TEST(KerasMetrics, AucAtKerasDefaults) {
  json binary = {{"input", 4},
                 {"loss", "binary_crossentropy"},
                 {"layers", {{{"units", 1}, {"activation", "sigmoid"}}}}};
  binary["metrics"] = json::parse(R"(["auc", {"class_name": "AUC", "config": {"name": "area",
      "dtype": "float32", "num_thresholds": 200, "curve": "ROC", "summation_method":
      "interpolation", "multi_label": false, "num_labels": null, "label_weights": null,
      "from_logits": false}}])");
  const std::vector<MetricSpec> listed = parse(binary).metric_list();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].kind, Metric::auc);
  EXPECT_EQ(listed[0].name, "auc");
  EXPECT_EQ(listed[1].name, "area");
  binary["metrics"] = json::parse(R"([{"class_name": "AUC", "config": {"curve": "PR"}}])");
  EXPECT_THAT(error_for(binary), HasSubstr("metrics[0].config.curve"));
  binary["metrics"] = json::parse(R"([{"class_name": "AUC", "config": {"num_thresholds": 50}}])");
  EXPECT_THAT(error_for(binary), HasSubstr("metrics[0].config.num_thresholds"));
  json wide = binary;
  wide["targets"] = 3, wide["layers"][0]["units"] = 3, wide["metrics"] = {"auc"};
  EXPECT_THAT(error_for(wide),
              HasSubstr("metrics[0]: auc reads one output (a binary classifier's), but the model "
                        "has 3 outputs"));
}

// ---- Callbacks ----------------------------------------------------------------------------------

json fit_with(const json& callbacks) {
  return {{"epochs", 5}, {"validation_split", 0.2}, {"callbacks", callbacks}};
}

TEST(KerasCallbacks, EarlyStoppingAndReduceLROnPlateauWithKerasDefaults) {
  const ModelSpec s = parse(spec_with(
      json::array(),
      {{"metrics", {"accuracy"}},
       {"fit", fit_with(json::parse(
                   R"([{"type": "EarlyStopping", "patience": 3, "restore_best_weights": true},
                                        {"class_name": "ReduceLROnPlateau", "config": {"monitor": "val_accuracy", "factor": 0.5,
                                         "verbose": 1}}])"))}}));
  ASSERT_TRUE(s.fit.early_stopping.has_value());
  EXPECT_EQ(s.fit.early_stopping->monitor, "val_loss");
  EXPECT_EQ(s.fit.early_stopping->patience, 3);
  EXPECT_TRUE(s.fit.early_stopping->restore_best_weights);
  EXPECT_EQ(s.fit.early_stopping->min_delta, 0.0);
  EXPECT_FALSE(s.fit.early_stopping->baseline.has_value());
  ASSERT_TRUE(s.fit.reduce_lr_on_plateau.has_value());
  EXPECT_EQ(s.fit.reduce_lr_on_plateau->monitor, "val_accuracy");
  EXPECT_EQ(s.fit.reduce_lr_on_plateau->factor, 0.5);
  EXPECT_EQ(s.fit.reduce_lr_on_plateau->patience, 10) << "Keras's default";
  EXPECT_EQ(s.fit.reduce_lr_on_plateau->min_delta, 1e-4);
}

TEST(KerasCallbacks, RefusalsNameTheCallbackAndWhatToDo) {
  const auto error = [](const json& callbacks, double split = 0.2) {
    json fit = fit_with(callbacks);
    fit["validation_split"] = split;
    return error_for(spec_with(json::array(), {{"fit", fit}}));
  };
  EXPECT_THAT(
      error({{{"type", "EarlyStopping"}, {"monitor", "val_los"}}}),
      AllOf(
          HasSubstr("fit.callbacks[0].monitor: no metric \"val_los\" (did you mean \"val_loss\"?)"),
          HasSubstr("the model reports loss, accuracy, val_loss, val_accuracy")));
  EXPECT_THAT(
      error({{{"type", "EarlyStopping"}}}, 0),
      HasSubstr(
          "\"val_loss\" needs validation rows; set fit.validation_split, or monitor \"loss\""));
  EXPECT_THAT(
      error({{{"type", "ModelCheckpoint"}}}),
      AllOf(HasSubstr("ModelCheckpoint is not a callback multifit runs: multifit run --save-best"),
            HasSubstr("multifit runs EarlyStopping and ReduceLROnPlateau")));
  EXPECT_THAT(error({{{"type", "EarlyStopping"}}, {{"type", "EarlyStopping"}}}),
              HasSubstr("a second EarlyStopping"));
  EXPECT_THAT(error({{{"type", "ReduceLROnPlateau"}, {"factor", 1.0}}}),
              HasSubstr("Keras refuses a factor >= 1"));
  EXPECT_THAT(error({{{"type", "EarlyStopping"}, {"mode", "maximum"}}}),
              HasSubstr("mode: got \"maximum\"; expected one of auto, min, max"));
  json scheduled = spec_with(json::array(), {{"fit", fit_with({{{"type", "ReduceLROnPlateau"}}})}});
  scheduled["optimizer"] =
      json::parse(R"({"name": "adam", "learning_rate": {"name": "ExponentialDecay",
      "initial_learning_rate": 0.01, "decay_steps": 10, "decay_rate": 0.9}})");
  EXPECT_THAT(error_for(scheduled), HasSubstr("ReduceLROnPlateau with a learning-rate schedule"));
}

// ---- The one form -------------------------------------------------------------------------------

// A spec with every new setting reads back from to_json as the same spec.
TEST(KerasSpec, EverySettingReadsBackFromToJson) {
  const ModelSpec s = parse(json::parse(R"({
    "input": 6, "targets": 3,
    "layers": [
      {"type": "Dense", "units": 16, "activation": "selu", "kernel_initializer": "lecun_normal",
       "bias_initializer": {"name": "constant", "value": 0.25}, "kernel_regularizer": "l2",
       "activity_regularizer": {"name": "l1_l2", "l1": 1e-5, "l2": 1e-4}},
      {"type": "Dropout", "rate": 0.125},
      {"type": "BatchNormalization", "momentum": 0.95, "scale": false,
       "moving_variance_initializer": {"name": "constant", "value": 2.0}},
      {"type": "Activation", "activation": "leaky_relu"},
      {"type": "Dense", "units": 3, "use_bias": false}],
    "loss": {"name": "categorical_crossentropy", "from_logits": true, "label_smoothing": 0.2},
    "metrics": ["accuracy", "mse"],
    "optimizer": {"name": "nadam", "beta_2": 0.99, "weight_decay": 0.001, "clipvalue": 0.5,
                  "learning_rate": {"name": "PiecewiseConstantDecay", "boundaries": [5], "values": [0.01, 0.001]}},
    "fit": {"epochs": 4, "validation_split": 0.25,
            "callbacks": [{"type": "EarlyStopping", "monitor": "val_mse", "baseline": 0.5, "start_from_epoch": 1}]}
  })"));
  const ModelSpec back = parse(to_json(s));
  EXPECT_TRUE(back == s) << to_json(s).dump();
}

// How many entries of a table of names (by value) or of traits (by kind) are for `kind`.
template <class Table, class Kind>
long entries_for(const Table& table, Kind kind) {
  return std::count_if(std::begin(table), std::end(table), [&](const auto& entry) {
    if constexpr (requires { entry.value; })
      return entry.value == kind;
    else
      return entry.kind == kind;
  });
}

// nn/initializers.h holds each initializer once, and its settings read back as written.
TEST(KerasInitializers, EveryKindHasItsNamesAndSettingsOnce) {
  for (int k = 0; k <= int(InitializerKind::truncated_normal); ++k) {
    EXPECT_EQ(entries_for(kInitializerNames, InitializerKind(k)), 1) << k;
    EXPECT_EQ(entries_for(kInitializerTraits, InitializerKind(k)), 1) << k;
  }
  const json dense = {
      {"units", 2},
      {"kernel_initializer", {{"name", "random_uniform"}, {"minval", -0.5}}},
      {"bias_initializer", {{"class_name", "Constant"}, {"config", {{"value", 3}}}}}};
  const ModelSpec s = parse(spec_with(json::array({dense})));
  EXPECT_EQ(s.layers[0].kernel_initializer,
            Initializer(InitializerKind::random_uniform, -0.5, 0.05));
  EXPECT_EQ(s.layers[0].bias_initializer, Initializer(InitializerKind::constant, 3));
  EXPECT_EQ(parse(to_json(s)), s);
}

// And each schedule a spec names once, with its keys: a schedule written with every setting parses
// and writes back those settings alone.
TEST(KerasSchedules, EveryScheduleHasItsNameAndKeysOnce) {
  for (int k = int(ScheduleKind::exponential_decay); k <= int(ScheduleKind::polynomial_decay);
       ++k) {
    EXPECT_EQ(entries_for(kScheduleNames, ScheduleKind(k)), 1) << k;
    EXPECT_EQ(entries_for(kScheduleTraits, ScheduleKind(k)), 1) << k;
  }
  json schedule = {{"class_name", "CosineDecay"},
                   {"config",
                    {{"initial_learning_rate", 0.1},
                     {"decay_steps", 4},
                     {"alpha", 0.5},
                     {"warmup_target", 0.2},
                     {"warmup_steps", 2}}}};
  const ModelSpec s = parse(
      spec_with(json::array(), {{"optimizer", {{"name", "adam"}, {"learning_rate", schedule}}}}));
  EXPECT_EQ(to_json(s)["optimizer"]["learning_rate"], schedule);
  schedule["config"]["power"] = 2;  // PolynomialDecay's, not CosineDecay's
  EXPECT_THROW(parse(spec_with(json::array(),
                               {{"optimizer", {{"name", "adam"}, {"learning_rate", schedule}}}})),
               UserError);
}

// kernels/optimizer_math.h's tables hold each optimizer once: its Keras names and its own keys.
TEST(KerasOptimizers, EveryKindHasItsNamesAndKeysOnce) {
  for (int k = 0; k < kOptimizerCount; ++k) {
    EXPECT_EQ(entries_for(kOptimizerNames, OptimizerKind(k)), 1) << k;
    EXPECT_EQ(entries_for(kOptimizerTraits, OptimizerKind(k)), 1) << k;
  }
  // each default as Keras's: SGD's rate, AdamW's decay, Lion's beta_2
  EXPECT_EQ(parse(spec_with(json::array(), {{"optimizer", "sgd"}})).optimizer.learning_rate, 0.01f);
  EXPECT_EQ(parse(spec_with(json::array(), {{"optimizer", "AdamW"}})).optimizer.weight_decay,
            0.004f);
  EXPECT_EQ(parse(spec_with(json::array(), {{"optimizer", "lion"}})).optimizer.beta_2, 0.99);
  EXPECT_EQ(parse(spec_with(json::array(), {{"optimizer", "adam"}})).optimizer.beta_2, 0.999);
}

// Each class multifit.keras makes of keras_classes() (nn/keras_classes.cpp) is one the spec reader
// takes in the form Python writes it, {"class_name", "config"}, with the settings given by position
// where Keras's signature has them; a schedule's are all it requires.
TEST(KerasClasses, EveryClassListedIsReadAsPythonWritesIt) {
  const json classes = keras_classes();
  const auto form = [](const json& entry, json config) {
    return json{{"class_name", entry["class_name"]}, {"config", std::move(config)}};
  };
  for (const json& e : classes["optimizers"]) {
    EXPECT_EQ(e["positional"], json{"learning_rate"}) << e;
    EXPECT_NO_THROW(
        parse(spec_with(json::array(), {{"optimizer", form(e, {{"learning_rate", 0.01}})}})))
        << e;
  }
  for (const json& e : classes["schedules"]) {
    json config;
    for (const json& key : e["positional"])  // PiecewiseConstantDecay's boundaries and values
      config[key] = key == "boundaries"    ? json{10}
                    : key == "values"      ? json{0.1, 0.01}
                    : key == "decay_steps" ? json(100)
                                           : json(0.5);
    EXPECT_NO_THROW(parse(
        spec_with({}, {{"optimizer", {{"name", "sgd"}, {"learning_rate", form(e, config)}}}})))
        << e;
  }
  for (const json& e : classes["losses"]) {  // 3 linear outputs: the cross-entropies from logits
    const std::string name = e["class_name"];
    const bool logits = name.ends_with("Crossentropy"), sparse = name.starts_with("Sparse");
    if (logits) {
      EXPECT_EQ(e["positional"][0], "from_logits") << e;
    }
    if (name == "Huber") {
      EXPECT_EQ(e["positional"], json{"delta"});
    }
    json spec = {{"input", 6},
                 {"loss", form(e, logits ? json{{"from_logits", true}} : json::object())},
                 {"layers", {{{"units", 3}}}}};
    if (!sparse) spec["targets"] = 3;
    EXPECT_NO_THROW(parse(spec)) << e;
  }
  for (const json& e : classes["initializers"]) {
    json config = json::object();
    for (const json& key : e["positional"]) config[key] = key == "seed" ? json(7) : json(0.5);
    if (e["class_name"] == "RandomUniform") config["minval"] = -0.5;
    EXPECT_NO_THROW(parse(spec_with({{{"units", 4}, {"kernel_initializer", form(e, config)}}})))
        << e;
  }
  for (const json& e : classes["regularizers"]) {
    json config = json::object();
    for (const json& key : e["positional"]) config[key] = 1e-3;
    EXPECT_NO_THROW(parse(spec_with({{{"units", 4}, {"kernel_regularizer", form(e, config)}}})))
        << e;
  }
  ASSERT_FALSE(classes["metrics"].empty());
  for (const json& e : classes["metrics"]) EXPECT_TRUE(e["identifier"].is_string()) << e;
}

}  // namespace
}  // namespace mf
