#include "nn/spec.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "runtime/bytes.h"
#include "runtime/error.h"
#include "runtime/input_file.h"
#include "runtime/json_field.h"

namespace mf {
namespace {

constexpr uintmax_t kMaxSpecBytes = uintmax_t(16) << 20;  // a spec is a few KiB

using nlohmann::json;

// The names a spec uses (runtime/names.h); the same tables print the values back.
enum class LayerKind { dense };  // Keras names a layer's kind; dense is the only one here

constexpr Named<LayerKind> kLayerKinds[] = {{"dense", LayerKind::dense}};
constexpr Named<Loss> kLosses[] = {
    {"mse", Loss::mse},
    {"binary_crossentropy", Loss::binary_crossentropy},
    {"sparse_categorical_crossentropy", Loss::sparse_categorical_crossentropy}};

constexpr const char* kTopKeys[] = {"name", "data", "input",  "layers",      "loss",          "targets", "optimizer",
                                    "fit",  "seed", "memory", "input_shape", "preprocessing", "pipeline"};
constexpr const char* kLayerKeys[] = {"type", "units", "activation"};
constexpr const char* kAdamKeys[] = {"name", "learning_rate", "beta_1", "beta_2", "epsilon"};
constexpr const char* kSgdKeys[] = {"name", "learning_rate", "momentum"};
// A layer's width is a GEMM dimension that the CUDA kernels tile on grid.y (at
// most 65535 tiles of 32): 2^20 keeps every width well inside.
constexpr uint64_t kMaxWidth = uint64_t(1) << 20;
constexpr const char* kFitKeys[] = {"epochs", "batch_size", "validation_split", "shuffle"};
constexpr const char* kMemoryKeys[] = {"limit", "mode"};
constexpr const char* kPipelineKeys[] = {"workers", "prefetch"};
// A worker is a host thread and a prefetched batch a buffer of the pack's rows; a step takes one
// batch at a time, so more than 64 of either only costs threads or memory.
constexpr uint64_t kMaxPipelineWorkers = 64;
constexpr uint64_t kMaxPrefetch = 64;

// A beta as written (0.999, not 0.999f): Keras takes 1 - beta in double (element_math.h).
double parse_beta(const Field& field) {
  field.fraction();  // the same rule
  return field.value().get<double>();
}

// In double: Keras splits at floor(rows * (1 - split)), and 0.2f would cost a row of 1000. 1 is not
// allowed: a validation split of 1 leaves no training rows.
double parse_split(const Field& field) {
  if (field.value().is_number()) {
    const double x = field.value().get<double>();
    if (x >= 0 && x < 1) return x;
  }
  field.wrong("a number in [0, 1)");
}

LayerSpec parse_layer(const Field& field) {
  field.object(kLayerKeys);
  if (const auto kind = field.optional("type")) kind->one_of(kLayerKinds);
  LayerSpec layer;
  layer.units = field.at("units").positive_int(kMaxWidth);
  if (const auto activation = field.optional("activation")) {
    layer.activation = activation->one_of(kActivationNames);
  }
  return layer;
}

std::vector<LayerSpec> parse_layers(const Field& field) {
  if (!field.value().is_array() || field.value().empty()) field.wrong("a non-empty array of layers");
  std::vector<LayerSpec> layers;
  for (size_t i = 0; i < field.value().size(); ++i) layers.push_back(parse_layer(field.item(i)));
  // Softmax normalises a whole row into class probabilities; it only means that on the output.
  for (size_t i = 0; i + 1 < layers.size(); ++i)
    if (layers[i].activation == Activation::softmax)
      field.item(i).at("activation").fail("softmax on a hidden layer",
                                          "softmax is only allowed on the last layer");
  return layers;
}

OptimizerSpec parse_optimizer(const Field& field) {
  OptimizerSpec optimizer;
  if (field.value().is_string()) {  // Keras's shorthand: a name alone, with Keras's defaults
    optimizer.kind = field.one_of(kOptimizerNames);
    if (optimizer.kind == OptimizerKind::sgd) optimizer.learning_rate = 0.01f;
    return optimizer;
  }
  field.require_object("an optimizer name (\"adam\" or \"sgd\") or an object with a name and its settings");
  optimizer.kind = field.at("name").one_of(kOptimizerNames);
  const bool adam = optimizer.kind == OptimizerKind::adam;
  const Keys own = adam ? Keys(kAdamKeys) : Keys(kSgdKeys);
  const Keys other = adam ? Keys(kSgdKeys) : Keys(kAdamKeys);
  // A setting of the other optimizer would be silently ignored; say which one it belongs to.
  for (const auto& entry : field.value().items())
    if (!contains(own, entry.key()) && contains(other, entry.key()))
      field.at(entry.key()).fail(std::string("only for ") + (adam ? "sgd" : "adam"),
                                 std::string(to_string(optimizer.kind)) + " takes " + join(own));
  field.allow_keys(own);

  if (!adam) optimizer.learning_rate = 0.01f;  // Keras's SGD default; Adam's is the struct's
  if (const auto rate = field.optional("learning_rate")) optimizer.learning_rate = rate->positive_number();
  if (adam) {
    if (const auto beta = field.optional("beta_1")) optimizer.beta_1 = parse_beta(*beta);
    if (const auto beta = field.optional("beta_2")) optimizer.beta_2 = parse_beta(*beta);
    if (const auto epsilon = field.optional("epsilon")) optimizer.epsilon = epsilon->positive_number();
  } else if (const auto momentum = field.optional("momentum")) {
    optimizer.momentum = momentum->fraction();
  }
  return optimizer;
}

FitSpec parse_fit(const Field& field) {
  field.object(kFitKeys);
  FitSpec fit;
  // 0 epochs is allowed, as in Keras: build, evaluate and save the initial weights.
  if (const auto epochs = field.optional("epochs")) fit.epochs = epochs->count();
  if (const auto batch = field.optional("batch_size")) fit.batch_size = batch->positive_int();
  if (const auto split = field.optional("validation_split")) fit.validation_split = parse_split(*split);
  if (const auto shuffle = field.optional("shuffle")) fit.shuffle = shuffle->boolean();
  return fit;
}

size_t parse_limit(const Field& field) {
  const std::string allowed =
      "a positive number of bytes or a size with " + size_units() + ", like \"64MiB\"";
  if (field.value().is_string()) {
    // parse_bytes says the same in its own words; this message keeps the spec's shape.
    try {
      const size_t bytes = parse_bytes(field.value().get<std::string>(), field.where());
      if (bytes > 0) return bytes;  // "0.1" rounds to no bytes at all
    } catch (const UserError&) {
    }
    field.wrong(allowed);
  }
  if (const auto bytes = integer_in(field.value(), 1, std::numeric_limits<size_t>::max())) return *bytes;
  field.wrong(allowed);
}

PipelineSpec parse_pipeline(const Field& field) {
  field.object(kPipelineKeys);
  PipelineSpec pipeline;
  if (const auto workers = field.optional("workers")) pipeline.workers = workers->positive_int(kMaxPipelineWorkers);
  if (const auto prefetch = field.optional("prefetch")) pipeline.prefetch = prefetch->positive_int(kMaxPrefetch);
  return pipeline;
}

MemorySpec parse_memory(const Field& field) {
  field.object(kMemoryKeys);
  MemorySpec memory;
  if (const auto limit = field.optional("limit")) memory.limit_bytes = parse_limit(*limit);
  if (const auto mode = field.optional("mode")) memory.mode = mode->one_of(kPoolModeNames);
  return memory;
}

// The losses are computed from the output layer's logits, so each loss fixes the output activation
// (mse, on plain outputs, takes any but softmax).
void check_loss_fits_output(const ModelSpec& spec, const Field& root) {
  const Field output = root.at("layers").item(spec.layers.size() - 1);
  const Field loss = root.at("loss");
  const Activation activation = spec.output_activation();
  const std::string output_is = output.at("activation").path() + " is " + to_string(activation);
  switch (spec.loss) {
    case Loss::mse:
      if (activation == Activation::softmax)
        loss.fail("mse does not fit a softmax output (" + output_is + ")",
                  "a softmax output needs sparse_categorical_crossentropy");
      break;
    case Loss::binary_crossentropy:
      if (activation != Activation::sigmoid)
        loss.fail("binary_crossentropy needs a sigmoid output, but " + output_is,
                  "make the last layer's activation sigmoid");
      break;
    case Loss::sparse_categorical_crossentropy:
      if (activation != Activation::softmax)
        loss.fail("sparse_categorical_crossentropy needs a softmax output, but " + output_is,
                  "make the last layer's activation softmax");
      if (spec.outputs() < 2)
        output.at("units").fail("a softmax output over " + std::to_string(spec.outputs()) + " class",
                                "expected at least 2 units, one per class");
      break;
  }
}

}  // namespace

ModelSpec parse_model_spec(const nlohmann::json& json, const std::string& source) {
  const Field root(json, source);
  root.object(kTopKeys);
  ModelSpec spec;
  if (const auto name = root.optional("name")) {
    spec.name = name->text();
    // A name is printed in every line about its model: no line breaks or terminal escapes.
    if (std::any_of(spec.name.begin(), spec.name.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
      name->fail("a control character in the name", "use printable characters");
  }
  if (const auto data = root.optional("data")) spec.data = data->text();
  spec.input = root.at("input").positive_int(kMaxWidth);
  spec.layers = parse_layers(root.at("layers"));
  spec.loss = root.at("loss").one_of(kLosses);
  if (const auto optimizer = root.optional("optimizer")) spec.optimizer = parse_optimizer(*optimizer);
  if (const auto fit = root.optional("fit")) spec.fit = parse_fit(*fit);
  if (const auto seed = root.optional("seed")) spec.seed = seed->non_negative_integer();
  if (const auto memory = root.optional("memory")) spec.memory = parse_memory(*memory);
  if (const auto shape = root.optional("input_shape")) {
    spec.input_shape = parse_image_shape(shape->value(), source, shape->path());
    check_image_shape(*spec.input_shape, spec.input, source, shape->path());  // with or without preprocessing
  }
  if (const auto list = root.optional("preprocessing"))
    spec.preprocessing = Preprocessing::parse(list->value(), spec.input_shape, spec.input, source, list->path());
  if (const auto pipeline = root.optional("pipeline")) spec.pipeline = parse_pipeline(*pipeline);
  check_loss_fits_output(spec, root);
  if (const auto targets = root.optional("targets")) {
    spec.targets = targets->positive_int(kMaxWidth);
    if (spec.loss == Loss::sparse_categorical_crossentropy && spec.targets != 1)
      targets->fail("sparse_categorical_crossentropy takes one label column", "expected 1");
    if (spec.loss != Loss::sparse_categorical_crossentropy && spec.targets != spec.outputs())
      targets->fail("got " + std::to_string(spec.targets) + ", but the output layer has " +
                        std::to_string(spec.outputs()) + " units",
                    std::string("expected ") + std::to_string(spec.outputs()) + ": " + to_string(spec.loss) +
                        " needs one target column per unit");
  }
  return spec;
}

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  check_input_file(path, what, kMaxSpecBytes);
  // stdio rather than a stream: it reports why a read failed (errno), directories included.
  const std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!file) throw UserError(path + ": cannot read: " + std::strerror(errno));
  std::string text;
  char buffer[1 << 16];
  size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) text.append(buffer, got);
  if (std::ferror(file.get())) throw UserError(path + ": cannot read: " + std::strerror(errno));
  // what() starts with "[json.exception.parse_error.101] "; the rest is the useful part.
  const auto detail = [](const nlohmann::json::exception& e) {
    std::string text = e.what();
    if (const size_t end = text.find("] "); end != std::string::npos) text.erase(0, end + 2);
    for (char& c : text)
      if (c == '\n' || c == '\r') c = ' ';
    return text;
  };
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UserError(path + ": invalid JSON at byte " + std::to_string(e.byte) + ": " + detail(e));
  } catch (const nlohmann::json::exception& e) {  // a number past a double's range (out_of_range.406)
    throw UserError(path + ": invalid JSON: " + detail(e) + "; numbers must be within a double's range");
  }
}

json to_json(const ModelSpec& spec) {
  json layers = json::array();
  for (const LayerSpec& layer : spec.layers) layers.push_back({{"units", layer.units}, {"activation", to_string(layer.activation)}});
  const OptimizerSpec& o = spec.optimizer;
  json optimizer = {{"name", to_string(o.kind)}, {"learning_rate", o.learning_rate}};
  if (o.kind == OptimizerKind::adam) {
    optimizer.update({{"beta_1", o.beta_1}, {"beta_2", o.beta_2}, {"epsilon", o.epsilon}});
  } else {
    optimizer["momentum"] = o.momentum;
  }
  json out = {{"name", spec.name},
          {"data", spec.data},
          {"input", spec.input},
          {"layers", layers},
          {"loss", to_string(spec.loss)},
          {"targets", spec.targets},
          {"optimizer", optimizer},
          {"fit", {{"epochs", spec.fit.epochs}, {"batch_size", spec.fit.batch_size},
                   {"validation_split", spec.fit.validation_split}, {"shuffle", spec.fit.shuffle}}},
          {"seed", spec.seed},
          {"memory", {{"limit", spec.memory.limit_bytes}, {"mode", to_string(spec.memory.mode)}}},
          {"pipeline", {{"workers", spec.pipeline.workers}, {"prefetch", spec.pipeline.prefetch}}}};
  // Only when set: an input_shape has no form for "none" (the parser takes no null), and no list
  // reads back as the empty one.
  if (const auto& shape = spec.input_shape) out["input_shape"] = {shape->height, shape->width, shape->channels};
  if (!spec.preprocessing.empty()) out["preprocessing"] = spec.preprocessing.to_json();
  return out;
}

ModelSpec load_model_spec(const std::string& path) { return parse_model_spec(read_json_file(path, "spec"), path); }

const char* to_string(Activation a) { return name_of(kActivationNames, a); }
const char* to_string(Loss l) { return name_of(kLosses, l); }

}  // namespace mf
