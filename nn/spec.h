#pragma once
// A model spec, Keras-like, read from JSON. Example (examples/fashion-mnist-mlp.json):
//
//   {
//     "name": "fashion-mnist-mlp",
//     "data": "fashion-mnist",
//     "input": 784,
//     "layers": [
//       {"units": 256, "activation": "relu"},
//       {"units": 128, "activation": "relu"},
//       {"units": 10, "activation": "softmax"}
//     ],
//     "loss": "sparse_categorical_crossentropy",
//     "optimizer": {"name": "adam", "learning_rate": 0.001},
//     "fit": {"epochs": 10, "batch_size": 32, "shuffle": true},
//     "seed": 42,
//     "memory": {"limit": "64MiB", "mode": "grow"}
//   }
//
// Every key with its default and unit: `multifit train --help`.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "data/preprocessing.h"
#include "kernels/element_math.h"
#include "runtime/memory_pool.h"
#include "runtime/names.h"

namespace mf {

inline constexpr Named<Activation> kActivationNames[] = {{"linear", Activation::linear},
                                                      {"relu", Activation::relu},
                                                      {"sigmoid", Activation::sigmoid},
                                                      {"tanh", Activation::tanh},
                                                      {"softmax", Activation::softmax}};

struct LayerSpec {
  int units = 0;
  Activation activation = Activation::linear;

  bool operator==(const LayerSpec&) const = default;
};

enum class OptimizerKind { adam, sgd };
inline constexpr Named<OptimizerKind> kOptimizerNames[] = {{"adam", OptimizerKind::adam}, {"sgd", OptimizerKind::sgd}};
inline const char* to_string(OptimizerKind k) { return name_of(kOptimizerNames, k); }

struct OptimizerSpec {
  OptimizerKind kind = OptimizerKind::adam;
  float learning_rate = 1e-3f;  // Keras: Adam 0.001, SGD 0.01
  double beta_1 = 0.9, beta_2 = 0.999;  // adam, as written: Keras takes 1 - beta in double
  float epsilon = 1e-7f;
  float momentum = 0.f;                                   // sgd

  bool operator==(const OptimizerSpec&) const = default;
};

struct FitSpec {
  int epochs = 1;
  int batch_size = 32;
  double validation_split = 0;  // the last fraction of the training rows, taken before shuffling
  bool shuffle = true;

  bool operator==(const FitSpec&) const = default;
};

// The host input pipeline of a model with preprocessing (tf.data's num_parallel_calls and prefetch):
// `workers` host threads prepare the next batches (gather, preprocess) into `prefetch` ring slots
// while the current step runs. Without preprocessing it is not used: the batches are read from the
// resident data set.
struct PipelineSpec {
  int workers = 1;
  int prefetch = 2;

  bool operator==(const PipelineSpec&) const = default;
};

struct MemorySpec {
  size_t limit_bytes = size_t(256) << 20;
  PoolMode mode = PoolMode::grow;

  bool operator==(const MemorySpec&) const = default;
};

struct ModelSpec {
  std::string name = "model";
  std::string data = "fashion-mnist";  // default data source, overridden by --data
  int input = 0;
  std::vector<LayerSpec> layers;
  Loss loss = Loss::mse;
  OptimizerSpec optimizer;
  FitSpec fit;
  uint64_t seed = 0;
  MemorySpec memory;
  // Target columns at the end of each CSV row: 1, or one per output unit for multi-output mse and
  // multi-label binary cross-entropy (0/1 labels).
  int targets = 1;
  std::optional<ImageShape> input_shape;  // "input_shape": [height, width, channels], for image preprocessing
  Preprocessing preprocessing;             // applied to training batches only; empty: none
  PipelineSpec pipeline;

  // The host threads its input pipeline runs beside its training: pipeline.workers with
  // preprocessing, else none (nn/input_pipeline.h).
  int pipeline_threads() const { return preprocessing.empty() ? 0 : pipeline.workers; }
  int outputs() const { return layers.back().units; }
  Activation output_activation() const { return layers.back().activation; }
  // Every field: what parse_model_spec(to_json(spec)) gives back.
  bool operator==(const ModelSpec&) const = default;
};

// Validates strictly; every problem is a UserError of one line that names
// `source` (a file name), the JSON path and what is allowed.
ModelSpec parse_model_spec(const nlohmann::json& json, const std::string& source);
// The spec as JSON that parse_model_spec reads back to an equal spec, every key written (input_shape
// and preprocessing only when the spec has them): what a child process is sent (a float's value
// crosses exactly: JSON numbers are doubles).
nlohmann::json to_json(const ModelSpec& spec);
// Reads a JSON file (a spec, a sweep): a regular file of at most 16 MiB; anything else, or invalid
// JSON, is a UserError naming the file (`what` says which kind of file it should be).
nlohmann::json read_json_file(const std::string& path, const std::string& what);
// Reads and parses a spec file; a missing file or invalid JSON is a UserError too.
ModelSpec load_model_spec(const std::string& path);

const char* to_string(Activation a);
const char* to_string(Loss l);

}  // namespace mf
