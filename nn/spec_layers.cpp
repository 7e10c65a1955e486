// A spec's layers: Keras 3's Dense, Dropout, BatchNormalization, Activation and Flatten (and an
// InputLayer first, or a first layer's input_shape, for the input's width), with their initializers
// and regularizers, by Keras's names, keyword arguments and defaults.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "nn/spec_parts.h"
#include "runtime/error.h"

namespace mf {
namespace {

using nlohmann::json;

constexpr KerasName<LayerKind> kLayerKinds[] = {
    {nullptr, "Dense", LayerKind::dense},
    {nullptr, "Dropout", LayerKind::dropout},
    {nullptr, "BatchNormalization", LayerKind::batch_normalization},
    {nullptr, "Activation", LayerKind::activation},
    {nullptr, "Flatten", LayerKind::flatten},
    {nullptr, "InputLayer", LayerKind::flatten}};

// Keras's activation layers, each an Activation layer here (at their defaults).
struct ActivationLayer {
  const char* class_name;
  Activation activation;
};
constexpr ActivationLayer kActivationLayers[] = {
    {"ReLU", Activation::relu}, {"ELU", Activation::elu}, {"Softmax", Activation::softmax}};

// Keras layers outside a dense network's scope, and the nearest thing multifit has.
struct OutOfScope {
  const char* prefix;  // the class names it covers: this name, or names that start with it
  const char* nearest;
};
constexpr OutOfScope kOutOfScope[] = {
    {"Conv", "flatten each image into a row (\"input\": height x width x channels) and use Dense"},
    {"DepthwiseConv", "flatten each image into a row and use Dense"},
    {"SeparableConv", "flatten each image into a row and use Dense"},
    {"MaxPooling", "flatten each image into a row and use Dense"},
    {"AveragePooling", "flatten each image into a row and use Dense"},
    {"Global", "flatten each image into a row and use Dense"},
    {"LSTM", "give each sequence as one flat row and use Dense"},
    {"GRU", "give each sequence as one flat row and use Dense"},
    {"SimpleRNN", "give each sequence as one flat row and use Dense"},
    {"RNN", "give each sequence as one flat row and use Dense"},
    {"Bidirectional", "give each sequence as one flat row and use Dense"},
    {"TimeDistributed", "give each sequence as one flat row and use Dense"},
    {"Embedding", "one-hot the indices into input columns and use Dense"},
    {"LayerNormalization", "the nearest is BatchNormalization"},
    {"GroupNormalization", "the nearest is BatchNormalization"},
    {"UnitNormalization", "the nearest is BatchNormalization"},
    {"Normalization", "normalize the data before training, or use BatchNormalization"},
    {"Rescaling", "scale the data before training"},
    {"GaussianNoise",
     "put it in \"preprocessing\", where GaussianNoise is a training-time operation"},
    {"GaussianDropout", "the nearest is Dropout"},
    {"AlphaDropout", "the nearest is Dropout"},
    {"SpatialDropout", "the nearest is Dropout"},
    {"Random",
     "put it in \"preprocessing\", where RandomFlip, RandomTranslation, RandomZoom and RandomContrast are"},
    {"LeakyReLU",
     "use {\"type\": \"Activation\", \"activation\": \"leaky_relu\"} (its negative_slope is 0.2)"},
    {"PReLU", "use an Activation layer: relu, leaky_relu, elu, selu, gelu, swish or softplus"},
};
constexpr const char* kScope =
    "multifit trains Sequential dense networks of Dense, Dropout, BatchNormalization, Activation and Flatten layers";

// ---- Keras's defaults that multifit keeps ------------------------------------------------------

constexpr KerasDefault kLayerDefaults[] = {
    {"trainable", "true", "multifit trains every layer"},
    {"dtype", "\"float32\"", "multifit computes in float32"},
};
constexpr KerasDefault kDenseDefaults[] = {
    {"kernel_constraint", "null", "multifit applies no weight constraints"},
    {"bias_constraint", "null", "multifit applies no weight constraints"},
    {"quantization_config", "null", "multifit trains float32 weights"},
    {"lora_rank", "null", "multifit trains every weight of a layer"},
};
constexpr KerasDefault kDropoutDefaults[] = {
    {"noise_shape", "null", "multifit drops each unit on its own"},
};
constexpr KerasDefault kBatchNormDefaults[] = {
    {"axis", "-1", "multifit normalizes each feature column over the batch"},
    {"beta_regularizer", "null", "multifit regularizes Dense layers only"},
    {"gamma_regularizer", "null", "multifit regularizes Dense layers only"},
    {"beta_constraint", "null", "multifit applies no weight constraints"},
    {"gamma_constraint", "null", "multifit applies no weight constraints"},
    {"synchronized", "false", "multifit normalizes over each model's own batch"},
    {"renorm", "false", "multifit normalizes with the batch's statistics (Ioffe and Szegedy's)"},
};
constexpr KerasDefault kFlattenDefaults[] = {
    {"data_format", "\"channels_last\"", "multifit's image rows are channels last"},
};
constexpr KerasDefault kInputDefaults[] = {
    {"sparse", "false", "multifit reads dense rows"},
    {"ragged", "false", "multifit reads rows of one width"},
    {"optional", "false", "a model's input is required"},
};

// ---- Initializers and regularizers -------------------------------------------------------------

// Keras's seed of an initializer (or a Dropout) draws from its own generator; multifit draws every
// initial weight from the model's seed, so the same spec gives the same numbers on every backend.
constexpr const char* kSeedKeys[] = {"seed", "input_axes", "output_axes"};

Initializer parse_initializer(const Field& field) {
  const KerasObject object(field, "name", "initializer");
  Initializer init{object.one_of(kInitializerNames)};
  const InitializerTraits& traits = initializer_traits(init.kind);
  const std::vector<const char*> keys = listed(traits.keys);
  object.allow(keys, kSeedKeys);
  double* settings[] = {&init.a, &init.b};
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto f = object.setting(keys[i]);
    *settings[i] = f ? f->number_in(-1e30, 1e30, "a finite number") : traits.defaults[i];
  }
  if (init.kind == InitializerKind::random_uniform && init.b < init.a)
    field.fail("maxval below minval", "expected minval <= maxval");
  if ((init.kind == InitializerKind::random_normal ||
       init.kind == InitializerKind::truncated_normal) &&
      init.b < 0)
    field.fail("a negative stddev", "expected stddev >= 0");
  return init;
}

json initializer_to_json(const Initializer& init) {
  const InitializerTraits& traits = initializer_traits(init.kind);
  const char* name = name_of(kInitializerNames, init.kind);
  if (!traits.keys[0]) return name;
  json out = {{"name", name}, {traits.keys[0], init.a}};
  if (traits.keys[1]) out[traits.keys[1]] = init.b;
  return out;
}

// A penalty factor: a number >= 0, `fallback` where not given.
float penalty_factor(const KerasObject& object, const char* key, float fallback) {
  const auto f = object.setting(key);
  return f ? float(f->number_in(0, 1e30, "a finite number >= 0")) : fallback;
}

// null (none), "l1" or "l2" (Keras's 0.01), or an object of the factors: {"name": "l1_l2", "l1":
// 1e-5, "l2": 1e-4} (a factor not given is 0, as in Keras 3's L1L2) or {"class_name": "L2",
// "config": {"l2": 1e-4}}.
Regularizer parse_regularizer(const Field& field) {
  if (field.value().is_null()) return {};
  const KerasObject object(field, "name", "regularizer");
  const RegularizerTraits& traits = regularizer_traits(object.one_of(kRegularizerNames));
  object.allow(listed(traits.keys));
  Regularizer r;
  for (const char* key : listed(traits.keys))
    (std::string(key) == "l1" ? r.l1 : r.l2) = penalty_factor(object, key, traits.factor);
  return r;
}

json regularizer_to_json(const Regularizer& r) {
  if (!r.any()) return nullptr;
  return {{"name", "l1_l2"}, {"l1", number(r.l1)}, {"l2", number(r.l2)}};
}

// ---- One layer -----------------------------------------------------------------------------

Activation parse_activation(const Field& field) { return field.one_of(kActivationNames); }

std::vector<const char*> joined(std::vector<const char*> a, const std::vector<const char*>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The keys a layer's own checks take besides its settings: the defaults above and Keras's seed.
std::vector<const char*> layer_ignored(const KerasObject& object,
                                       std::span<const KerasDefault> own) {
  std::vector<const char*> ignored = check_defaults(object, kLayerDefaults);
  return joined(std::move(ignored), check_defaults(object, own));
}

// The input's shape a first layer's input_shape ([N], or an image's [height, width, channels]) or
// input_dim (N) gives (Keras 2's form, which Keras 3 still takes), or an InputLayer's shape or
// batch_shape ([null, ...]).
std::optional<std::vector<int>> input_dims(const KerasObject& object) {
  if (const auto f = object.setting("input_dim"))
    return std::vector<int>{f->positive_int(kMaxWidth)};
  for (const char* key : {"input_shape", "shape", "batch_shape", "batch_input_shape"})
    if (const auto f = object.setting(key))
      return shape_dims(*f, std::strncmp(key, "batch", 5) == 0);
  return std::nullopt;
}

constexpr const char* kInputKeys[] = {"input_shape", "input_dim"};

LayerSpec parse_dense(const KerasObject& object, bool first) {
  std::vector<const char*> ignored = layer_ignored(object, kDenseDefaults);
  ignored.push_back("lora_alpha");
  if (first) ignored.insert(ignored.end(), std::begin(kInputKeys), std::end(kInputKeys));
  object.allow(
      std::initializer_list<const char*>{"units", "activation", "use_bias", "kernel_initializer",
                                         "bias_initializer", "kernel_regularizer",
                                         "bias_regularizer", "activity_regularizer"},
      ignored);
  LayerSpec layer;
  if (!object.settings())
    object.kind_field().fail("a Dense layer without its units", "give it units");
  layer.units = object.settings()->at("units").positive_int(kMaxWidth);
  if (const auto f = object.setting("activation"); f && !f->value().is_null())
    layer.activation = parse_activation(*f);
  if (const auto f = object.setting("use_bias")) layer.use_bias = f->boolean();
  if (const auto f = object.setting("kernel_initializer"))
    layer.kernel_initializer = parse_initializer(*f);
  if (const auto f = object.setting("bias_initializer"))
    layer.bias_initializer = parse_initializer(*f);
  if (const auto f = object.setting("kernel_regularizer"))
    layer.kernel_regularizer = parse_regularizer(*f);
  if (const auto f = object.setting("bias_regularizer"))
    layer.bias_regularizer = parse_regularizer(*f);
  if (const auto f = object.setting("activity_regularizer"))
    layer.activity_regularizer = parse_regularizer(*f);
  if (!layer.use_bias && layer.bias_regularizer.any())
    object.setting("bias_regularizer")
        ->fail("a bias regularizer without a bias", "set use_bias to true or drop it");
  return layer;
}

LayerSpec parse_dropout(const KerasObject& object) {
  std::vector<const char*> ignored = layer_ignored(object, kDropoutDefaults);
  ignored.push_back("seed");  // multifit's masks come from the model's seed (kernels/layer_math.h)
  object.allow(std::initializer_list<const char*>{"rate"}, ignored);
  LayerSpec layer;
  layer.kind = LayerKind::dropout;
  if (!object.settings())
    object.kind_field().fail("a Dropout layer without its rate", "give it a rate in [0, 1)");
  const Field rate = object.settings()->at("rate");
  layer.rate = rate.number_in(0, 1, "a number in [0, 1)");
  if (layer.rate >= 1) rate.wrong("a number in [0, 1): a rate of 1 drops everything");
  return layer;
}

LayerSpec parse_batch_normalization(const KerasObject& object) {
  std::vector<const char*> ignored = layer_ignored(object, kBatchNormDefaults);
  ignored.insert(ignored.end(), {"renorm_clipping", "renorm_momentum"});  // used with renorm alone
  object.allow(
      std::initializer_list<const char*>{"momentum", "epsilon", "center", "scale",
                                         "beta_initializer", "gamma_initializer",
                                         "moving_mean_initializer", "moving_variance_initializer"},
      ignored);
  LayerSpec layer;
  layer.kind = LayerKind::batch_normalization;
  if (const auto f = object.setting("momentum")) {
    f->fraction();
    layer.momentum = f->value().get<double>();  // as written: Keras takes 1 - momentum in double
  }
  if (const auto f = object.setting("epsilon")) {
    f->positive_number();
    layer.epsilon = f->value().get<double>();
  }
  if (const auto f = object.setting("center")) layer.center = f->boolean();
  if (const auto f = object.setting("scale")) layer.scale = f->boolean();
  if (const auto f = object.setting("beta_initializer"))
    layer.beta_initializer = parse_initializer(*f);
  if (const auto f = object.setting("gamma_initializer"))
    layer.gamma_initializer = parse_initializer(*f);
  if (const auto f = object.setting("moving_mean_initializer"))
    layer.moving_mean_initializer = parse_initializer(*f);
  if (const auto f = object.setting("moving_variance_initializer"))
    layer.moving_variance_initializer = parse_initializer(*f);
  return layer;
}

LayerSpec parse_activation_layer(const KerasObject& object) {
  object.allow(std::initializer_list<const char*>{"activation"}, layer_ignored(object, {}));
  LayerSpec layer;
  layer.kind = LayerKind::activation;
  if (!object.settings())
    object.kind_field().fail("an Activation layer without its activation", "give it one");
  layer.activation = parse_activation(object.settings()->at("activation"));
  return layer;
}

// Keras's ReLU, ELU and Softmax layers at their defaults: Activation layers.
std::optional<LayerSpec> parse_activation_class(const KerasObject& object) {
  for (const ActivationLayer& a : kActivationLayers) {
    if (object.kind() != a.class_name) continue;
    constexpr KerasDefault kDefaults[] = {
        {"max_value", "null", "multifit's relu has no ceiling"},
        {"negative_slope", "0.0", "multifit's relu is 0 below 0"},
        {"threshold", "0.0", "multifit's relu starts at 0"},
        {"alpha", "1.0", "multifit's elu has alpha 1"},
        {"axis", "-1", "multifit's softmax is over a row's classes"}};
    object.allow({}, layer_ignored(object, kDefaults));
    LayerSpec layer;
    layer.kind = LayerKind::activation;
    layer.activation = a.activation;
    return layer;
  }
  return std::nullopt;
}

// A Keras layer multifit does not have: one line naming it, what multifit trains and the nearest.
void refuse_out_of_scope(const KerasObject& object) {
  const auto lower = [](std::string text) {
    for (char& c : text) c = char(std::tolower(static_cast<unsigned char>(c)));
    return text;
  };
  for (const OutOfScope& o : kOutOfScope)
    if (lower(object.kind()).rfind(lower(o.prefix), 0) == 0)
      object.kind_field().fail(object.kind() + " is not a layer multifit trains: " + o.nearest,
                               kScope);
}

}  // namespace

bool is_float32(const json& dtype) {
  if (dtype.is_null()) return true;
  if (dtype.is_string()) return dtype == "float32";
  const auto config = dtype.find("config");
  return dtype.is_object() && dtype.value("class_name", "") == "DTypePolicy" &&
         config != dtype.end() && config->is_object() && config->value("name", "") == "float32";
}

std::vector<int> shape_dims(const Field& field, bool batch) {
  const json& v = field.value();
  const std::string expected = std::string(batch ? "[null, features]" : "[features]") +
                               " (or an image's height, width, channels) with at most " +
                               std::to_string(kMaxWidth) + " values in all";
  if (!v.is_array() || v.size() < (batch ? 2u : 1u) ||
      (batch && !v[0].is_null() && !v[0].is_number_integer()))
    field.wrong(expected);
  std::vector<int> dims;
  uint64_t values = 1;
  for (size_t i = batch ? 1 : 0; i < v.size(); ++i) {
    const std::optional<uint64_t> size = integer_in(v[i], 1, kMaxWidth);
    if (!size || (values *= *size) > kMaxWidth) field.wrong(expected);
    dims.push_back(int(*size));
  }
  return dims;
}

const char* keras_class(InitializerKind kind) { return class_of(kInitializerNames, kind); }

std::vector<std::string> activation_names() { return names_with_aliases(kActivationNames); }
std::vector<std::string> initializer_entries() {
  std::vector<std::string> out;
  for (const InitializerTraits& traits : kInitializerTraits) {
    const json written =
        initializer_to_json(Initializer(traits.kind, traits.defaults[0], traits.defaults[1]));
    std::vector<std::string> settings;
    for (const char* key : listed(traits.keys))
      settings.push_back(std::string(key) + " " + default_text(written[key]));
    out.push_back(name_of(kInitializerNames, traits.kind) +
                  (settings.empty() ? std::string() : " (" + joined(settings) + ")"));
  }
  return out;
}

std::vector<const char*> check_defaults(const KerasObject& object,
                                        std::span<const KerasDefault> defaults) {
  std::vector<const char*> keys;
  for (const KerasDefault& d : defaults) {
    keys.push_back(d.key);
    const auto f = object.setting(d.key);
    if (!f) continue;
    const json accepted = json::parse(d.accepted);
    const json& value = f->value();
    const bool ok = std::strcmp(d.key, "dtype") == 0 ? is_float32(value)
                    : accepted.is_number()
                        ? value.is_number() && value.get<double>() == accepted.get<double>()
                        : value == accepted;
    if (!ok) f->fail("got " + shown(value), std::string("expected ") + d.accepted + ": " + d.why);
  }
  return keys;
}

ParsedLayers parse_layers(const Field& field) {
  if (!field.value().is_array() || field.value().empty())
    field.wrong("a non-empty array of layers");
  ParsedLayers parsed;
  size_t input_layers = 0;  // 1 where an InputLayer comes first: layer i is then item i + 1
  for (size_t i = 0; i < field.value().size(); ++i) {
    const Field item = field.item(i);
    item.require_object(
        "a layer: an object with its \"type\" (Dense by default) and settings, or {\"class_name\": ..., \"config\": {...}}");
    const KerasObject object(item, "type", "layer", "Dense");
    const bool first = parsed.layers.empty();
    if (object.kind() == "InputLayer") {  // the input's width: no layer of its own
      if (!first || parsed.input)
        object.kind_field().fail("an InputLayer after other layers", "put it first");
      object.allow(
          std::initializer_list<const char*>{"shape", "batch_shape", "batch_input_shape",
                                             "batch_size"},
          joined(check_defaults(object, kLayerDefaults), check_defaults(object, kInputDefaults)));
      parsed.input = input_dims(object);
      if (!parsed.input)
        item.fail("an InputLayer without its shape", "give it \"shape\": [features]");
      parsed.input_from = item;
      input_layers = 1;
      continue;
    }
    if (const std::optional<LayerSpec> activation = parse_activation_class(object)) {
      parsed.layers.push_back(*activation);
      continue;
    }
    refuse_out_of_scope(object);
    LayerSpec layer;
    switch (object.one_of(kLayerKinds)) {
      case LayerKind::dense:
        layer = parse_dense(object, first);
        break;
      case LayerKind::dropout:
        layer = parse_dropout(object);
        break;
      case LayerKind::batch_normalization:
        layer = parse_batch_normalization(object);
        break;
      case LayerKind::activation:
        layer = parse_activation_layer(object);
        break;
      case LayerKind::flatten:
        object.allow({}, layer_ignored(object, kFlattenDefaults));
        layer.kind = LayerKind::flatten;
        break;
    }
    if (first && !parsed.input)
      if (std::optional<std::vector<int>> dims = input_dims(object)) {
        parsed.input = std::move(dims);
        parsed.input_from = item;
      }
    parsed.layers.push_back(layer);
  }
  if (parsed.layers.empty())
    field.fail("an InputLayer and no layer", "a model has at least one Dense layer");
  // Softmax normalises a whole row into class probabilities; it only means that on the output.
  for (size_t i = 0; i + 1 < parsed.layers.size(); ++i)
    if (parsed.layers[i].activation == Activation::softmax &&
        (parsed.layers[i].kind == LayerKind::dense ||
         parsed.layers[i].kind == LayerKind::activation))
      layer_settings(field.item(i + input_layers))
          .at("activation")
          .fail("softmax on a hidden layer", "softmax is only allowed on the last layer");
  const LayerSpec& last = parsed.layers.back();
  if (last.kind != LayerKind::dense && last.kind != LayerKind::activation)
    field.item(field.value().size() - 1)
        .fail(
            std::string("a ") + to_string(last.kind) + " layer last",
            "the last layer must be Dense or Activation: the loss reads the model's output from it");
  if (std::none_of(parsed.layers.begin(), parsed.layers.end(),
                   [](const LayerSpec& l) { return l.kind == LayerKind::dense; }))
    field.fail("no Dense layer", "a model has at least one Dense layer");
  return parsed;
}

json layer_to_json(const LayerSpec& l) {
  // A layer's defining keys always (Dense's units and activation, Dropout's rate,
  // BatchNormalization's momentum, epsilon, center and scale); its initializers, bias and
  // regularizers only where they differ from Keras's defaults, so that an old spec's layers read
  // back and write as they did.
  json out;
  if (l.kind != LayerKind::dense) out["type"] = to_string(l.kind);
  switch (l.kind) {
    case LayerKind::dense: {
      out["units"] = l.units;
      out["activation"] = to_string(l.activation);
      const LayerSpec defaults;
      if (!l.use_bias) out["use_bias"] = false;
      if (l.kernel_initializer != defaults.kernel_initializer)
        out["kernel_initializer"] = initializer_to_json(l.kernel_initializer);
      if (l.bias_initializer != defaults.bias_initializer)
        out["bias_initializer"] = initializer_to_json(l.bias_initializer);
      if (l.kernel_regularizer.any())
        out["kernel_regularizer"] = regularizer_to_json(l.kernel_regularizer);
      if (l.bias_regularizer.any())
        out["bias_regularizer"] = regularizer_to_json(l.bias_regularizer);
      if (l.activity_regularizer.any())
        out["activity_regularizer"] = regularizer_to_json(l.activity_regularizer);
      break;
    }
    case LayerKind::dropout:
      out["rate"] = l.rate;
      break;
    case LayerKind::batch_normalization: {
      out.update({{"momentum", l.momentum},
                  {"epsilon", l.epsilon},
                  {"center", l.center},
                  {"scale", l.scale}});
      const LayerSpec defaults;
      if (l.beta_initializer != defaults.beta_initializer)
        out["beta_initializer"] = initializer_to_json(l.beta_initializer);
      if (l.gamma_initializer != defaults.gamma_initializer)
        out["gamma_initializer"] = initializer_to_json(l.gamma_initializer);
      if (l.moving_mean_initializer != defaults.moving_mean_initializer)
        out["moving_mean_initializer"] = initializer_to_json(l.moving_mean_initializer);
      if (l.moving_variance_initializer != defaults.moving_variance_initializer)
        out["moving_variance_initializer"] = initializer_to_json(l.moving_variance_initializer);
      break;
    }
    case LayerKind::activation:
      out["activation"] = to_string(l.activation);
      break;
    case LayerKind::flatten:
      break;
  }
  return out;
}

}  // namespace mf
