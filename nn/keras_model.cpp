#include "nn/keras_model.h"

#include <cctype>
#include <map>
#include <utility>
#include <vector>

#include "nn/spec.h"
#include "nn/spec_parts.h"

namespace mf {
namespace {

using nlohmann::json;

// The keys of a serialized Sequential's envelope, of its own config and of its compile_config.
constexpr const char* kEnvelopeKeys[] = {"module",          "class_name",   "config",
                                         "registered_name", "build_config", "compile_config"};
constexpr const char* kSequentialKeys[] = {"name",   "trainable",         "dtype",
                                           "layers", "build_input_shape", "compile_config"};
constexpr const char* kCompileKeys[] = {
    "optimizer",        "loss",        "metrics",     "loss_weights",
    "weighted_metrics", "jit_compile", "run_eagerly", "steps_per_execution",
    "auto_scale_loss"};
// Compile settings multifit takes only as Keras leaves them; the others above say where a model
// runs (jit_compile, run_eagerly, steps_per_execution, auto_scale_loss) and are ignored.
struct CompileDefault {
  const char* key;
  const char* why;
};
constexpr CompileDefault kCompileDefaults[] = {
    {"loss_weights", "multifit's models have one output, weighted 1"},
    {"weighted_metrics", "multifit weighs every row alike"}};
// A spec's model keys, which "keras_config" replaces.
constexpr const char* kModelKeys[] = {"input", "input_shape", "layers",
                                      "loss",  "optimizer",   "metrics"};

const json kNoMetrics = json::array();

// Keras's float32 policy, as Keras 3 writes a layer's or a model's dtype.
const nlohmann::ordered_json kFloat32Policy = {{"module", "keras"},
                                               {"class_name", "DTypePolicy"},
                                               {"config", {{"name", "float32"}}},
                                               {"registered_name", nullptr}};

// [null, d1, ...]: a batch of rows of `dims`.
nlohmann::ordered_json batch_shape(const std::vector<int>& dims) {
  nlohmann::ordered_json shape = {nullptr};
  for (const int d : dims) shape.push_back(d);
  return shape;
}

// The fields of a Keras Sequential's config at `config` (any of the three forms).
ModelFields keras_model_fields(const Field& config) {
  config.require_object(
      "a Keras Sequential's config: model.to_json()'s object, a .keras file's config.json or model.get_config()");
  Field model = config;
  std::optional<Field> compile = config.optional("compile_config");
  if (config.value().contains("class_name")) {
    const Field kind = config.at("class_name");
    if (kind.value() != "Sequential")
      kind.fail(
          "a " + shown(kind.value()) + " model",
          "multifit converts a keras.Sequential of Dense, Dropout, BatchNormalization, Activation and Flatten layers");
    config.allow_keys(kEnvelopeKeys);
    model = config.at("config");
    model.require_object("the Sequential's own config, with its \"layers\"");
  }
  model.allow_keys(kSequentialKeys);
  if (!compile) compile = model.optional("compile_config");
  if (const auto trainable = model.optional("trainable"); trainable && trainable->value() != true)
    trainable->fail("got " + shown(trainable->value()),
                    "expected true: multifit trains every layer");
  if (const auto dtype = model.optional("dtype"); dtype && !is_float32(dtype->value()))
    dtype->fail("got " + shown(dtype->value()),
                "expected \"float32\": multifit computes in float32");

  ModelFields fields;
  fields.keras = config;
  fields.name = model.optional("name");
  fields.layers = model.at("layers");
  fields.batch_shape = model.optional("build_input_shape");
  if (!compile || compile->value().is_null()) return fields;
  compile->require_object("model.compile()'s settings");
  compile->allow_keys(kCompileKeys);
  for (const CompileDefault& d : kCompileDefaults)
    if (const auto f = compile->optional(d.key); f && !f->value().is_null())
      f->fail("got " + shown(f->value()), std::string("expected null: ") + d.why);
  // compile() without a loss leaves the model as uncompiled as no compile() at all
  if (const auto loss = compile->optional("loss"); loss && !loss->value().is_null())
    fields.loss = loss;
  if (const auto optimizer = compile->optional("optimizer");
      optimizer && !optimizer->value().is_null())
    fields.optimizer = optimizer;
  const auto metrics = compile->optional("metrics");
  // Keras writes null for compile() without metrics: none, not the spec's default accuracy
  fields.metrics = metrics && !metrics->value().is_null()
                       ? *metrics
                       : Field(kNoMetrics, config.source(), compile->path() + ".metrics");
  return fields;
}

// ---- Spec -> Keras ------------------------------------------------------------------------------

using ojson = nlohmann::ordered_json;

ojson serialized(const char* module, const std::string& class_name, ojson config) {
  return {{"module", module},
          {"class_name", class_name},
          {"config", std::move(config)},
          {"registered_name", nullptr}};
}

// keras.src.utils.naming.to_snake_case: "BatchNormalization" -> "batch_normalization", "RMSprop"
// -> "rm_sprop": an underscore before each capital that starts a lower-case run, and between a
// lower-case letter and a capital.
std::string snake_case(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    const auto upper = [&](size_t j) { return j < name.size() && std::isupper(name[j]); };
    const auto lower = [&](size_t j) { return j < name.size() && std::islower(name[j]); };
    if (i > 0 && upper(i) && (lower(i + 1) || lower(i - 1))) out += '_';
    out += char(std::tolower(static_cast<unsigned char>(name[i])));
  }
  return out;
}

ojson keras_initializer(const Initializer& init) {
  const InitializerTraits& traits = initializer_traits(init.kind);
  ojson config = ojson::object();
  if (traits.seeded) config["seed"] = nullptr;
  if (traits.keys[0]) config[traits.keys[0]] = init.a;
  if (traits.keys[1]) config[traits.keys[1]] = init.b;
  return serialized("keras.initializers", keras_class(init.kind), config);
}

// L1 or L2 where the other factor is 0, as a Keras user writes them; else L1L2.
ojson keras_regularizer(const Regularizer& r) {
  if (!r.any()) return nullptr;
  if (r.l2 == 0.f) return serialized("keras.regularizers", "L1", {{"l1", number(r.l1)}});
  if (r.l1 == 0.f) return serialized("keras.regularizers", "L2", {{"l2", number(r.l2)}});
  return serialized("keras.regularizers", "L1L2", {{"l1", number(r.l1)}, {"l2", number(r.l2)}});
}

// Keras's serialized layer of `layer` named `name`, reading rows of `row`; `row` becomes its
// output's.
ojson keras_layer(const LayerSpec& layer, const std::string& name, std::vector<int>& row) {
  const char* class_name = to_string(layer.kind);
  ojson config = {{"name", name}, {"trainable", true}, {"dtype", kFloat32Policy}};
  ojson build = {{"input_shape", batch_shape(row)}};
  switch (layer.kind) {
    case LayerKind::activation:
      config["activation"] = to_string(layer.activation);
      return serialized("keras.layers", class_name, config);
    case LayerKind::dropout:
      config.update({{"rate", layer.rate}, {"seed", nullptr}, {"noise_shape", nullptr}});
      return serialized("keras.layers", class_name, config);
    case LayerKind::flatten: {
      config["data_format"] = "channels_last";
      int values = 1;
      for (const int d : row) values *= d;
      row = {values};
      break;
    }
    case LayerKind::batch_normalization:
      config.update(
          {{"axis", -1},
           {"momentum", layer.momentum},
           {"epsilon", layer.epsilon},
           {"center", layer.center},
           {"scale", layer.scale},
           {"beta_initializer", keras_initializer(layer.beta_initializer)},
           {"gamma_initializer", keras_initializer(layer.gamma_initializer)},
           {"moving_mean_initializer", keras_initializer(layer.moving_mean_initializer)},
           {"moving_variance_initializer", keras_initializer(layer.moving_variance_initializer)},
           {"beta_regularizer", nullptr},
           {"gamma_regularizer", nullptr},
           {"beta_constraint", nullptr},
           {"gamma_constraint", nullptr}});
      break;
    case LayerKind::dense:
      // Keras writes an activity regularizer, where there is one, before the layer's own settings
      if (layer.activity_regularizer.any())
        config["activity_regularizer"] = keras_regularizer(layer.activity_regularizer);
      config.update({{"units", layer.units},
                     {"activation", to_string(layer.activation)},
                     {"use_bias", layer.use_bias},
                     {"kernel_initializer", keras_initializer(layer.kernel_initializer)},
                     {"bias_initializer", keras_initializer(layer.bias_initializer)},
                     {"kernel_regularizer", keras_regularizer(layer.kernel_regularizer)},
                     {"bias_regularizer", keras_regularizer(layer.bias_regularizer)},
                     {"kernel_constraint", nullptr},
                     {"bias_constraint", nullptr}});
      row = {layer.units};
      break;
  }
  ojson out = serialized("keras.layers", class_name, config);
  out["build_config"] = build;
  return out;
}

// The optimizer's settings as the spec writes them, its schedule serialized, named as Keras names
// its instance ("rm_sprop"); Keras's defaults apply to the settings it leaves out.
ojson keras_optimizer(const OptimizerSpec& optimizer) {
  const std::string class_name = keras_class(optimizer.kind);
  const json flat = optimizer_to_json(optimizer);
  ojson config = {{"name", snake_case(class_name)}};
  for (const auto& [key, value] : flat.items())
    if (key != "name") config[key] = ojson(value);
  if (optimizer.schedule) {
    const json& schedule = flat["learning_rate"];
    config["learning_rate"] =
        serialized("keras.optimizers.schedules", schedule["class_name"].get<std::string>(),
                   ojson(schedule["config"]));
  }
  return serialized("keras.optimizers", class_name, config);
}

// Keras's loss string ("mse"), or its serialized class where the spec gives it settings.
ojson keras_loss(const LossSpec& loss) {
  const json flat = loss_to_json(loss);
  if (flat.is_string()) return ojson(flat);
  ojson config = {{"name", flat["name"]}, {"reduction", "sum_over_batch_size"}};
  for (const auto& [key, value] : flat.items())
    if (key != "name") config[key] = ojson(value);
  return serialized("keras.losses", class_of(kLossNames, loss.kind), config);
}

// Each metric by its class and name (as to_json writes them, so that "accuracy" keeps its kind).
ojson keras_metrics(const std::vector<MetricSpec>& metrics) {
  ojson out = ojson::array();
  for (const MetricSpec& m : metrics)
    out.push_back(serialized("keras.metrics", metric_class_name(m.kind),
                             {{"name", m.name}, {"dtype", "float32"}}));
  return out;
}

}  // namespace

ModelFields model_fields(const Field& root) {
  const auto keras = root.optional("keras_config");
  if (!keras) {
    ModelFields own;
    own.name = root.optional("name");
    own.input = root.optional("input");
    own.input_shape = root.optional("input_shape");
    own.layers = root.at("layers");
    own.loss = root.at("loss");
    own.optimizer = root.optional("optimizer");
    own.metrics = root.optional("metrics");
    return own;
  }
  for (const char* key : kModelKeys)
    if (const auto f = root.optional(key))
      f->fail("a model key beside keras_config",
              "give the model once: in keras_config, or in the spec's own keys");
  ModelFields fields;
  if (keras->value().is_string()) {
    const std::string path = keras->text();
    if (path.starts_with("{"))
      keras->fail(
          "model.to_json()'s text as a string",
          "give the config itself, an object (json.loads(model.to_json())), or a file's path");
    if (path.ends_with(".keras"))
      keras->fail("a .keras file, a zip archive",
                  "give the config.json inside it (unzip it), or a file of model.to_json()");
    auto source = std::make_shared<const std::string>(path);
    auto document = std::make_shared<const json>(read_json_file(*source, "Keras model config"));
    fields = keras_model_fields(Field(*document, *source));
    fields.document = std::move(document);
    fields.document_source = std::move(source);
  } else if (keras->value().is_object()) {
    fields = keras_model_fields(*keras);
  } else {
    keras->wrong(
        "a Keras Sequential's config (model.to_json()'s object) or the path of a JSON file holding it");
  }
  // the spec names its model where it says so; a Keras model keeps its own name otherwise
  if (const auto name = root.optional("name")) fields.name = name;
  if (!fields.loss)
    keras->fail("a Keras config without a compiled loss (model.get_config() leaves it out)",
                "give model.to_json() of a model compiled with a loss");
  return fields;
}

json spec_from_keras(const json& config, const std::string& source) {
  const Field root(config, source);
  ModelFields model = keras_model_fields(root);
  // The metrics are read as Keras reads them: categorical cross-entropy's labels one-hot, a column
  // per output (a spec without "targets" takes class indices, beside which mse has nothing to
  // compare an output with). The spec written leaves the columns to the data it is given.
  const std::optional<Field> metrics = std::exchange(model.metrics, std::nullopt);
  ModelSpec spec = parse_spec(root, model);
  const json whole = to_json(spec);
  json out = {{"name", spec.name}, {"input", spec.input}, {"layers", whole["layers"]}};
  if (whole.contains("input_shape")) out["input_shape"] = whole["input_shape"];
  if (!model.loss) return out;
  for (const char* key : {"loss", "optimizer"}) out[key] = whole[key];
  if (spec.loss.kind == Loss::categorical_crossentropy) spec.targets = spec.outputs();
  if (metrics) out["metrics"] = metrics_to_json(parse_metrics(*metrics, spec));
  return out;
}

}  // namespace mf

namespace mf {

nlohmann::ordered_json keras_config(const nlohmann::json& spec_json, const std::string& source) {
  const Field root(spec_json, source);
  root.require_object("a spec: an object with its input and layers");
  ModelFields fields = model_fields(root);
  // a model is written without its compile settings where the spec has no loss
  if (!fields.keras && !root.value().contains("loss")) fields.loss.reset();
  const ModelSpec spec = parse_spec(root, fields);

  std::vector<int> row = {spec.input};
  if (const auto& image = spec.input_shape; image && spec.layers.front().kind == LayerKind::flatten)
    row = {image->height, image->width, image->channels};
  const ojson input = batch_shape(row);
  ojson layers = {serialized(
      "keras.layers", "InputLayer",
      {{"batch_shape", input}, {"dtype", "float32"}, {"sparse", false}, {"name", "input_layer"}})};
  std::map<std::string, int> numbered;  // Keras's names in a fresh session: dense, dense_1, ...
  for (const LayerSpec& layer : spec.layers) {
    const std::string kind = snake_case(to_string(layer.kind));
    const int n = numbered[kind]++;
    layers.push_back(keras_layer(layer, n == 0 ? kind : kind + "_" + std::to_string(n), row));
  }
  ojson config = {{"module", "keras"},
                  {"class_name", "Sequential"},
                  {"config",
                   {{"name", spec.name},
                    {"trainable", true},
                    {"dtype", kFloat32Policy},
                    {"layers", layers},
                    {"build_input_shape", input}}},
                  {"registered_name", nullptr},
                  {"build_config", {{"input_shape", input}}}};
  if (!fields.loss) return config;
  config["compile_config"] = {{"optimizer", keras_optimizer(spec.optimizer)},
                              {"loss", keras_loss(spec.loss)},
                              {"loss_weights", nullptr},
                              {"metrics", keras_metrics(spec.metric_list())},
                              {"weighted_metrics", nullptr},
                              {"run_eagerly", false},
                              {"steps_per_execution", 1},
                              {"jit_compile", "auto"}};
  return config;
}

}  // namespace mf
