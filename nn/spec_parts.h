#pragma once
// The parts of a spec's parser (nn/spec.cpp), one file each: layers (spec_layers.cpp), the
// optimizer and its schedule (spec_optimizer.cpp), the loss and metrics (spec_loss.cpp), fit's
// callbacks (spec_callbacks.cpp). Each reads its part of the JSON and writes it back in the form it
// reads (to_json's), and checks what it can check alone; the rules across parts are spec.cpp's.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/keras_object.h"
#include "nn/spec.h"

namespace mf {

// A layer's width is a GEMM dimension that the CUDA kernels tile on grid.y (at most 65535 tiles of
// 32): 2^20 keeps every width, and the input's, well inside.
inline constexpr uint64_t kMaxWidth = uint64_t(1) << 20;

// A Keras setting multifit takes only at its default (a layer's trainable, a loss's reduction):
// written by get_config() everywhere, so it is accepted, and any other value is refused with why.
struct KerasDefault {
  const char* key;
  const char* accepted;  // the value as JSON text ("true", "null", "-1")
  const char* why;       // what multifit does instead, for the message
};
// Checks each of `defaults` that `object` sets; the keys, for KerasObject::allow's ignored list.
std::vector<const char*> check_defaults(const KerasObject& object,
                                        std::span<const KerasDefault> defaults);

// The layers, and the input's shape an InputLayer entry or a first layer's input_shape or input_dim
// gives (nullopt when none does: (features), or an image's (height, width, channels) that a first
// Flatten makes a row), with the field that gave it.
struct ParsedLayers {
  std::vector<LayerSpec> layers;
  std::optional<std::vector<int>> input;
  std::optional<Field> input_from;
};
ParsedLayers parse_layers(const Field& field);
// The sizes of an input shape at `field`: [d1, ...], or with `batch` Keras's [null, d1, ...]; each
// a positive integer, at most kMaxWidth values in all.
std::vector<int> shape_dims(const Field& field, bool batch);
// Whether a dtype (a string, or Keras's DTypePolicy object) is float32; null is Keras's default
// policy, float32.
bool is_float32(const nlohmann::json& dtype);
// A layer's settings: its config in Keras's serialized form, else the layer's object itself.
inline Field layer_settings(const Field& layer) {
  return layer.value().is_object() && layer.value().contains("config") ? layer.at("config") : layer;
}
nlohmann::json layer_to_json(const LayerSpec& layer);

// keras.regularizers' classes (l1, l2, l1_l2 their other names) and their factors in Keras 3's
// order, each defaulting to `factor`: L1(l1=0.01), L2(l2=0.01), L1L2(l1=0.0, l2=0.0).
enum class RegularizerKind { l1, l2, l1_l2 };
inline constexpr KerasName<RegularizerKind> kRegularizerNames[] = {
    {"l1", "L1", RegularizerKind::l1},
    {"l2", "L2", RegularizerKind::l2},
    {"l1_l2", "L1L2", RegularizerKind::l1_l2}};
struct RegularizerTraits {
  RegularizerKind kind;
  const char* keys[2];  // nullptr after the last
  float factor;
};
inline constexpr RegularizerTraits kRegularizerTraits[] = {
    {RegularizerKind::l1, {"l1"}, 0.01f},
    {RegularizerKind::l2, {"l2"}, 0.01f},
    {RegularizerKind::l1_l2, {"l1", "l2"}, 0.f}};
constexpr const RegularizerTraits& regularizer_traits(RegularizerKind kind) {
  for (const RegularizerTraits& entry : kRegularizerTraits)
    if (entry.kind == kind) return entry;
  return kRegularizerTraits[0];  // never: every kind has its entry
}
// The Keras class of an initializer ("HeNormal") and of an optimizer ("RMSprop").
const char* keras_class(InitializerKind kind);
const char* keras_class(OptimizerKind kind);

// A setting's default as the help prints it: a number to float32's digits (1e-07, not
// 9.99999993922529e-08; 0, not 0.0), anything else as JSON.
std::string default_text(const nlohmann::json& value);

OptimizerSpec parse_optimizer(const Field& field);
nlohmann::json optimizer_to_json(const OptimizerSpec& optimizer);

// A loss's own settings, in the order of its Keras class's signature
// (BinaryCrossentropy(from_logits, label_smoothing, ...), Huber(delta, ...)); the others
// (reduction, name, ...) are every loss's.
std::vector<const char*> loss_keys(Loss kind);
LossSpec parse_loss(const Field& field);
nlohmann::json loss_to_json(const LossSpec& loss);
// The metrics as written; `spec` has its loss, layers and targets, which decide what "accuracy" is
// (Keras's rule: binary for one output, sparse categorical for a class index, else categorical).
std::vector<MetricSpec> parse_metrics(const Field& field, const ModelSpec& spec);
// A classification loss's own accuracy, named "accuracy": the metrics of a spec that lists none
// (ModelSpec::metric_list).
std::vector<MetricSpec> default_metrics(const ModelSpec& spec);
nlohmann::json metrics_to_json(const std::vector<MetricSpec>& metrics);
const char* metric_class_name(Metric metric);

// Fit's "callbacks" into `fit`. The monitors are checked against the model's metrics by spec.cpp,
// which gets each callback's field and whether it sets the learning rate.
struct CallbackField {
  Field callback, monitor;
  bool sets_learning_rate = false;
};
std::vector<CallbackField> parse_callbacks(const Field& field, FitSpec& fit);
nlohmann::json callbacks_to_json(const FitSpec& fit);

// Where a spec's model is written: the spec's own keys, or a Keras Sequential's config
// (nn/keras_model.h). Each field is where the reader finds it, so that a message names the place
// the user wrote.
struct ModelFields {
  std::optional<Field> name;
  std::optional<Field> input;  // the spec's "input": the features per row
  // the spec's "input_shape": an image's [height, width, channels]
  std::optional<Field> input_shape;
  // Keras's build_input_shape, [null, d1, ...]: the input of a model built without an InputLayer
  std::optional<Field> batch_shape;
  std::optional<Field> layers;
  // nullopt for a Keras model never compiled; the spec's own "loss" is always given (a missing
  // key is a Field too, which its reader refuses)
  std::optional<Field> loss;
  std::optional<Field> optimizer, metrics;
  // The Keras config, where the model is one: a model without an input shape is refused there.
  std::optional<Field> keras;
  // A Keras config read from its file, which the fields above point into.
  std::shared_ptr<const nlohmann::json> document;
  std::shared_ptr<const std::string> document_source;
};
// The model of a spec (an object): its own keys, or its "keras_config" (nn/keras_model.cpp).
ModelFields model_fields(const Field& root);
// The spec at `root` with its model at `model`: parse_model_spec's rules, and a model without a
// loss (a Keras model never compiled) read for its layers and input alone.
ModelSpec parse_spec(const Field& root, const ModelFields& model);

// The JSON text of a float or double for to_json: a float's value crosses exactly (JSON numbers are
// doubles).
inline nlohmann::json number(float x) { return double(x); }

}  // namespace mf
