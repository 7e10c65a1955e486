#pragma once
// The parts of a spec's parser (nn/spec.cpp), one file each: layers (spec_layers.cpp), the
// optimizer and its schedule (spec_optimizer.cpp), the loss and metrics (spec_loss.cpp), fit's
// callbacks (spec_callbacks.cpp). Each reads its part of the JSON and writes it back in the form it
// reads (to_json's), and checks what it can check alone; the rules across parts are spec.cpp's.
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

// The layers, and the input width an InputLayer entry or a first layer's input_shape or input_dim
// gives (nullopt when none does), with the field that gave it.
struct ParsedLayers {
  std::vector<LayerSpec> layers;
  std::optional<int> input;
  std::optional<Field> input_from;
};
ParsedLayers parse_layers(const Field& field);
// A layer's settings: its config in Keras's serialized form, else the layer's object itself.
inline Field layer_settings(const Field& layer) {
  return layer.value().is_object() && layer.value().contains("config") ? layer.at("config") : layer;
}
nlohmann::json layer_to_json(const LayerSpec& layer);

OptimizerSpec parse_optimizer(const Field& field);
nlohmann::json optimizer_to_json(const OptimizerSpec& optimizer);

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

// The JSON text of a float or double for to_json: a float's value crosses exactly (JSON numbers are
// doubles).
inline nlohmann::json number(float x) { return double(x); }

}  // namespace mf
