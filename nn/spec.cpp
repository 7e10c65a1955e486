#include "nn/spec.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "nn/spec_parts.h"
#include "runtime/bytes.h"
#include "runtime/error.h"
#include "runtime/input_file.h"
#include "runtime/json_field.h"
#include "runtime/near_miss.h"

namespace mf {
namespace {

constexpr uintmax_t kMaxSpecBytes = uintmax_t(16) << 20;  // a spec is a few KiB

using nlohmann::json;

constexpr const char* kTopKeys[] = {"name",          "data",     "input",   "layers",
                                    "loss",          "metrics",  "targets", "optimizer",
                                    "fit",           "seed",     "memory",  "input_shape",
                                    "preprocessing", "pipeline", "device",  "keras_config"};
constexpr const char* kFitKeys[] = {"epochs",        "batch_size",   "validation_split", "shuffle",
                                    "sample_weight", "class_weight", "callbacks"};
constexpr const char* kMemoryKeys[] = {"limit", "mode"};
constexpr const char* kPipelineKeys[] = {"workers", "prefetch"};
constexpr const char* kDeviceKeys[] = {"sms", "sm_share"};
// More SMs than any GPU has (an H200 has 132): a bound on a typing mistake, not on the GPU; the
// GPU's own count is checked where the green contexts are made.
constexpr uint64_t kMaxSms = 1024;
// A worker is a host thread and a prefetched batch a buffer of the pack's rows; a step takes one
// batch at a time, so more than 64 of either only costs threads or memory.
constexpr uint64_t kMaxPipelineWorkers = 64;
constexpr uint64_t kMaxPrefetch = 64;

// In double: Keras splits at floor(rows * (1 - split)), and 0.2f would cost a row of 1000. 1 is not
// allowed: a validation split of 1 leaves no training rows.
double parse_split(const Field& field) {
  if (field.value().is_number()) {
    const double x = field.value().get<double>();
    if (x >= 0 && x < 1) return x;
  }
  field.wrong("a number in [0, 1)");
}

// Keras's class_weight: {"0": 1.0, "3": 2.5}, class indices to weights (JSON keys are strings).
ClassWeights parse_class_weight(const Field& field) {
  const std::string allowed =
      "an object of class indices to weights >= 0, like {\"0\": 1.0, \"1\": 5.0}";
  field.require_object(allowed);
  ClassWeights weights;
  for (const auto& [key, value] : field.value().items()) {
    const bool index =
        !key.empty() && key.size() <= 9 &&
        std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!index) field.fail("key \"" + key + "\" is not a class index", "expected " + allowed);
    weights[std::stoi(key)] = float(
        field.at(key).number_in(0, std::numeric_limits<float>::max(), "a finite number >= 0"));
  }
  return weights;
}

FitSpec parse_fit(const Field& field, std::vector<CallbackField>& callbacks) {
  field.object(kFitKeys);
  FitSpec fit;
  // 0 epochs is allowed, as in Keras: build, evaluate and save the initial weights.
  if (const auto epochs = field.optional("epochs")) fit.epochs = epochs->count();
  if (const auto batch = field.optional("batch_size")) fit.batch_size = batch->positive_int();
  if (const auto split = field.optional("validation_split"))
    fit.validation_split = parse_split(*split);
  if (const auto shuffle = field.optional("shuffle")) fit.shuffle = shuffle->boolean();
  if (const auto weighted = field.optional("sample_weight"))
    fit.sample_weight = weighted->boolean();
  if (const auto weights = field.optional("class_weight"))
    fit.class_weight = parse_class_weight(*weights);
  if (fit.sample_weight && !fit.class_weight.empty())  // Keras refuses the pair too
    field.fail("sample_weight and class_weight are both set",
               "a row is weighted by one of them: give the class weights in the sample weights");
  if (const auto list = field.optional("callbacks")) callbacks = parse_callbacks(*list, fit);
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
  if (const auto bytes = integer_in(field.value(), 1, std::numeric_limits<size_t>::max()))
    return *bytes;
  field.wrong(allowed);
}

PipelineSpec parse_pipeline(const Field& field) {
  field.object(kPipelineKeys);
  PipelineSpec pipeline;
  if (const auto workers = field.optional("workers"))
    pipeline.workers = workers->positive_int(kMaxPipelineWorkers);
  if (const auto prefetch = field.optional("prefetch"))
    pipeline.prefetch = prefetch->positive_int(kMaxPrefetch);
  return pipeline;
}

DeviceShare parse_device_share(const Field& field) {
  field.object(kDeviceKeys);
  DeviceShare share;
  if (const auto sms = field.optional("sms")) share.sms = sms->positive_int(kMaxSms);
  if (const auto percent = field.optional("sm_share")) share.sm_share = percent->positive_int(100);
  return share;
}

MemorySpec parse_memory(const Field& field) {
  field.object(kMemoryKeys);
  MemorySpec memory;
  if (const auto limit = field.optional("limit")) memory.limit_bytes = parse_limit(*limit);
  if (const auto mode = field.optional("mode")) memory.mode = mode->one_of(kPoolModeNames);
  return memory;
}

// The losses that take logits apply the output's sigmoid or softmax themselves, so each loss fixes
// the output activation: sigmoid for binary cross-entropy and softmax for the categorical ones, or
// linear where the loss is told its input is logits (from_logits); the others read any output but
// softmax, a row operation only the categorical losses undo.
void check_loss_fits_output(const ModelSpec& spec, const Field& layers, const Field& loss) {
  // the last entry is the last layer (an InputLayer is only first)
  const Field output = layer_settings(layers.item(layers.value().size() - 1));
  const Activation activation = spec.output_activation();
  const std::string output_is = output.at("activation").path() + " is " + to_string(activation);
  const char* name = to_string(spec.loss.kind);
  if (!takes_logits(spec.loss.kind)) {
    if (activation == Activation::softmax)
      loss.fail(
          std::string(name) + " does not fit a softmax output (" + output_is + ")",
          "a softmax output needs categorical_crossentropy or sparse_categorical_crossentropy");
    return;
  }
  const Activation needed = spec.loss.from_logits                         ? Activation::linear
                            : spec.loss.kind == Loss::binary_crossentropy ? Activation::sigmoid
                                                                          : Activation::softmax;
  if (activation != needed)
    loss.fail(std::string(name) + (spec.loss.from_logits ? " from logits" : "") + " needs a " +
                  to_string(needed) + " output, but " + output_is,
              spec.loss.from_logits
                  ? "from_logits means the outputs are logits: make the last layer linear"
                  : std::string("make the last layer's activation ") + to_string(needed) +
                        " (or linear, with from_logits: true)");
  if (sums_over_classes(spec.loss.kind) && spec.outputs() < 2)
    output.at("units").fail("a softmax output over " + std::to_string(spec.outputs()) + " class",
                            "expected at least 2 units, one per class");
}

void check_targets(const ModelSpec& spec, const Field& targets) {
  const int outputs = spec.outputs();
  const char* name = to_string(spec.loss.kind);
  if (spec.takes_label_columns(spec.targets)) return;
  switch (spec.loss.kind) {
    case Loss::sparse_categorical_crossentropy:
      targets.fail("sparse_categorical_crossentropy takes one label column", "expected 1");
      return;
    case Loss::categorical_crossentropy:
      targets.fail(
          "got " + std::to_string(spec.targets) + ", but the output layer has " +
              std::to_string(outputs) + " units",
          "expected " + std::to_string(outputs) + " (one-hot or soft labels) or 1 (class indices)");
      return;
    default:
      targets.fail("got " + std::to_string(spec.targets) + ", but the output layer has " +
                       std::to_string(outputs) + " units",
                   "expected " + std::to_string(outputs) + ": " + name +
                       " needs one target column per unit");
  }
}

// A callback's monitor is "loss", a metric's name, or either with "val_" (which needs validation
// rows).
void check_monitor(const ModelSpec& spec, const std::string& monitor, const Field& where) {
  std::vector<std::string> known = {"loss"};
  for (const MetricSpec& m : spec.metric_list()) known.push_back(m.name);
  const bool validation = monitor.rfind("val_", 0) == 0;
  const std::string metric = validation ? monitor.substr(4) : monitor;
  if (std::find(known.begin(), known.end(), metric) == known.end()) {
    std::vector<std::string> all = known;
    for (const std::string& k : known) all.push_back("val_" + k);
    where.fail("no metric " + shown(json(monitor)) + did_you_mean(monitor, all),
               "the model reports " + joined(all, [](const std::string& k) { return k; }));
  }
  if (validation && spec.fit.validation_split <= 0)
    where.fail(shown(json(monitor)) + " needs validation rows",
               "set fit.validation_split, or monitor \"" + metric + "\"");
}

void check_callbacks(const ModelSpec& spec, const std::vector<CallbackField>& callbacks) {
  for (const CallbackField& c : callbacks) {
    check_monitor(spec,
                  c.monitor.value().is_string() ? c.monitor.value().get<std::string>() : "val_loss",
                  c.monitor);
    if (c.sets_learning_rate && spec.optimizer.schedule)
      c.callback.fail(
          "ReduceLROnPlateau with a learning-rate schedule",
          "Keras refuses to set the rate of a schedule: give the optimizer a constant learning_rate");
  }
}

// The input's width from its shape (features), or an image's (height, width, channels) that a
// first Flatten makes a row: the spec's input_shape, where it gives none of its own.
void take_input_shape(ModelSpec& spec, const std::vector<int>& dims, const Field& from,
                      bool has_input_shape) {
  int64_t values = 1;
  for (const int d : dims) values *= d;
  if (dims.size() > 1) {
    if (spec.layers.front().kind != LayerKind::flatten)
      from.fail(std::string("an input of shape ") + shown(json(dims)) + " read by a " +
                    to_string(spec.layers.front().kind) + " layer",
                "multifit's rows are flat: put a Flatten first");
    if (dims.size() == 3 && !has_input_shape)
      spec.input_shape = ImageShape{dims[0], dims[1], dims[2]};
  }
  spec.input = int(values);
}

}  // namespace

ModelSpec parse_spec(const Field& root, const ModelFields& model) {
  ModelSpec spec;
  if (const auto& name = model.name) {
    spec.name = name->text();
    // A name is printed in every line about its model: no line breaks or terminal escapes.
    if (std::any_of(spec.name.begin(), spec.name.end(),
                    [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
      name->fail("a control character in the name", "use printable characters");
  }
  if (const auto data = root.optional("data")) spec.data = data->text();
  // read first: the fields are checked in the order written
  const auto& input = model.input;
  if (input) spec.input = input->positive_int(kMaxWidth);
  const ParsedLayers layers = parse_layers(*model.layers);
  spec.layers = layers.layers;
  std::optional<std::vector<int>> dims = layers.input;
  std::optional<Field> dims_from = layers.input_from;
  if (!dims && model.batch_shape && !model.batch_shape->value().is_null()) {
    dims = shape_dims(*model.batch_shape, true);
    dims_from = model.batch_shape;
  }
  if (input) {
    if (dims) {
      const int given = spec.input;
      take_input_shape(spec, *dims, *dims_from, model.input_shape.has_value());
      if (spec.input != given)
        dims_from->fail("an input of " + std::to_string(spec.input) + " features, but input is " +
                            std::to_string(given),
                        "give the same width, or only one of them");
    }
  } else if (dims) {
    take_input_shape(spec, *dims, *dims_from, model.input_shape.has_value());
  } else if (model.keras) {
    model.keras->fail("a model without an input shape",
                      "start it with keras.Input(shape=(features,)), or build it");
  } else {
    root.at("input").wrong("the number of features per row (or an InputLayer first in layers)");
  }
  if (model.loss) spec.loss = parse_loss(*model.loss);
  if (model.optimizer) spec.optimizer = parse_optimizer(*model.optimizer);
  std::vector<CallbackField> callbacks;
  if (const auto fit = root.optional("fit")) spec.fit = parse_fit(*fit, callbacks);
  if (const auto seed = root.optional("seed")) spec.seed = seed->non_negative_integer();
  if (const auto memory = root.optional("memory")) spec.memory = parse_memory(*memory);
  const std::string& source = root.source();
  if (const auto& shape = model.input_shape) {
    spec.input_shape = parse_image_shape(shape->value(), source, shape->path());
    // with or without preprocessing
    check_image_shape(*spec.input_shape, spec.input, source, shape->path());
  }
  if (const auto list = root.optional("preprocessing"))
    spec.preprocessing =
        Preprocessing::parse(list->value(), spec.input_shape, spec.input, source, list->path());
  if (const auto pipeline = root.optional("pipeline")) spec.pipeline = parse_pipeline(*pipeline);
  if (const auto device = root.optional("device")) spec.device_share = parse_device_share(*device);
  if (!model.loss) return spec;
  check_loss_fits_output(spec, *model.layers, *model.loss);
  if (const auto targets = root.optional("targets")) {
    spec.targets = targets->positive_int(kMaxWidth);
    check_targets(spec, *targets);
  }
  if (model.metrics) spec.metrics = parse_metrics(*model.metrics, spec);
  check_callbacks(spec, callbacks);
  return spec;
}

ModelSpec parse_model_spec(const nlohmann::json& json, const std::string& source) {
  const Field root(json, source);
  root.object(kTopKeys);
  return parse_spec(root, model_fields(root));
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
  } catch (const nlohmann::json::exception& e) {
    // a number past a double's range (out_of_range.406)
    throw UserError(path + ": invalid JSON: " + detail(e) +
                    "; numbers must be within a double's range");
  }
}

json to_json(const ModelSpec& spec) {
  json layers = json::array();
  for (const LayerSpec& layer : spec.layers) layers.push_back(layer_to_json(layer));
  json fit = {{"epochs", spec.fit.epochs},
              {"batch_size", spec.fit.batch_size},
              {"validation_split", spec.fit.validation_split},
              {"shuffle", spec.fit.shuffle}};
  if (spec.fit.sample_weight) fit["sample_weight"] = true;
  if (!spec.fit.class_weight.empty()) {
    json weights = json::object();
    for (const auto& [label, weight] : spec.fit.class_weight)
      weights[std::to_string(label)] = weight;
    fit["class_weight"] = weights;
  }
  if (spec.fit.early_stopping || spec.fit.reduce_lr_on_plateau)
    fit["callbacks"] = callbacks_to_json(spec.fit);
  json out = {
      {"name", spec.name},
      {"data", spec.data},
      {"input", spec.input},
      {"layers", layers},
      {"loss", loss_to_json(spec.loss)},
      {"targets", spec.targets},
      {"optimizer", optimizer_to_json(spec.optimizer)},
      {"fit", fit},
      {"seed", spec.seed},
      {"memory", {{"limit", spec.memory.limit_bytes}, {"mode", to_string(spec.memory.mode)}}},
      {"pipeline", {{"workers", spec.pipeline.workers}, {"prefetch", spec.pipeline.prefetch}}}};
  // Only when set: an input_shape has no form for "none" (the parser takes no null), and no list
  // reads back as the empty one; metrics only where the spec lists them.
  if (const auto& shape = spec.input_shape)
    out["input_shape"] = {shape->height, shape->width, shape->channels};
  if (!spec.preprocessing.empty()) out["preprocessing"] = spec.preprocessing.to_json();
  if (spec.metrics) out["metrics"] = metrics_to_json(*spec.metrics);
  json device = json::object();
  if (const auto& sms = spec.device_share.sms) device["sms"] = *sms;
  if (const auto& percent = spec.device_share.sm_share) device["sm_share"] = *percent;
  if (!device.empty()) out["device"] = device;
  return out;
}

ModelSpec load_model_spec(const std::string& path) {
  return parse_model_spec(read_json_file(path, "spec"), path);
}

const char* to_string(Activation a) { return name_of(kActivationNames, a); }
const char* to_string(LayerKind k) { return name_of(kLayerKindNames, k); }

bool ModelSpec::takes_label_columns(int columns) const {
  if (loss.kind == Loss::sparse_categorical_crossentropy) return columns == 1;
  if (loss.kind == Loss::categorical_crossentropy) return columns == 1 || columns == outputs();
  return columns == outputs();
}

int ModelSpec::target_cols() const {
  if (loss.kind == Loss::sparse_categorical_crossentropy) return 1;
  return loss.kind == Loss::categorical_crossentropy ? targets : outputs();
}

RowWeights ModelSpec::row_weights() const {
  if (fit.sample_weight) return RowWeights::sample;
  return fit.class_weight.empty() ? RowWeights::none : RowWeights::by_class;
}

int ModelSpec::width(size_t layer) const {
  for (size_t i = layer + 1; i-- > 0;)
    if (layers[i].kind == LayerKind::dense) return layers[i].units;
  return input;
}

std::vector<MetricSpec> ModelSpec::metric_list() const {
  return metrics ? *metrics : default_metrics(*this);
}

int ModelSpec::accuracy_metric() const {
  const std::vector<MetricSpec> list = metric_list();
  for (size_t i = 0; i < list.size(); ++i)
    if (is_accuracy(list[i].kind)) return int(i);
  return -1;
}

}  // namespace mf
