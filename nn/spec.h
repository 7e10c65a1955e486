#pragma once
// A model spec, Keras-like, read from JSON. Example (examples/fashion-mnist-keras-mlp.json):
//
//   {
//     "name": "fashion-mnist-keras-mlp",
//     "data": "fashion-mnist",
//     "input": 784,
//     "layers": [
//       {"type": "Dense", "units": 512, "activation": "relu"},
//       {"type": "Dropout", "rate": 0.2},
//       {"type": "Dense", "units": 10, "activation": "softmax"}
//     ],
//     "loss": "sparse_categorical_crossentropy",
//     "metrics": ["accuracy"],
//     "optimizer": {"name": "rmsprop", "learning_rate": 0.001},
//     "fit": {"epochs": 20, "batch_size": 128, "validation_split": 0.1,
//             "callbacks": [{"type": "EarlyStopping", "patience": 3, "restore_best_weights":
//             true}]},
//     "seed": 42,
//     "memory": {"limit": "64MiB", "mode": "grow"},
//     "device": {"sms": 16}
//   }
//
// The vocabulary is Keras 3's inside the dense-network scope: a layer's type is its Keras class
// name and its keys the class's keyword arguments, with Keras's defaults; an optimizer, loss,
// schedule, initializer or regularizer is its Keras string ("adam"), or an object of its settings
// with its name, or {"class_name": ..., "config": {...}} as Keras's get_config() and serialize()
// write it (nn/keras_object.h). Every key with its default and unit: `multifit train --help`.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "data/dataset.h"
#include "data/preprocessing.h"
#include "kernels/element_math.h"
#include "kernels/layer_math.h"
#include "kernels/loss_row.h"
#include "kernels/optimizer_math.h"
#include "nn/initializers.h"
#include "runtime/memory_pool.h"
#include "runtime/names.h"

namespace mf {

// ---- Layers -------------------------------------------------------------------------------------

enum class LayerKind { dense, dropout, batch_normalization, activation, flatten };
inline constexpr Named<LayerKind> kLayerKindNames[] = {
    {"Dense", LayerKind::dense},
    {"Dropout", LayerKind::dropout},
    {"BatchNormalization", LayerKind::batch_normalization},
    {"Activation", LayerKind::activation},
    {"Flatten", LayerKind::flatten}};

struct LayerSpec {
  // A Dense layer of `units` (the other kinds set `kind` and their own settings).
  LayerSpec(int units = 0, Activation activation = Activation::linear)
      : units(units), activation(activation) {}
  int units;              // Dense
  Activation activation;  // Dense, Activation
  LayerKind kind = LayerKind::dense;
  bool use_bias = true;  // Dense
  Initializer kernel_initializer{InitializerKind::glorot_uniform},
      bias_initializer{InitializerKind::zeros};
  Regularizer kernel_regularizer, bias_regularizer, activity_regularizer;  // Dense
  double rate = 0;                                                         // Dropout, in [0, 1)
  // BatchNormalization: keras.layers.BatchNormalization's defaults; center adds beta, scale gamma.
  double momentum = 0.99, epsilon = 1e-3;
  bool center = true, scale = true;
  Initializer beta_initializer{InitializerKind::zeros}, gamma_initializer{InitializerKind::ones},
      moving_mean_initializer{InitializerKind::zeros},
      moving_variance_initializer{InitializerKind::ones};

  bool operator==(const LayerSpec&) const = default;
};

// ---- Optimizers and learning-rate schedules ----------------------------------------------------

inline const char* to_string(OptimizerKind k) { return name_of(kOptimizerNames, k); }

// A keras.optimizers.schedules schedule, its settings as written (the kernels' float32 forms are
// made from them, kernels/optimizer_math.h).
struct ScheduleSpec {
  ScheduleKind kind = ScheduleKind::exponential_decay;
  double initial_learning_rate = 0;
  int64_t decay_steps = 1;
  double decay_rate = 0;                         // ExponentialDecay, InverseTimeDecay
  bool staircase = false;                        // ExponentialDecay, InverseTimeDecay
  double alpha = 0;                              // CosineDecay
  std::optional<double> warmup_target;           // CosineDecay
  int64_t warmup_steps = 0;                      // CosineDecay
  double end_learning_rate = 0.0001, power = 1;  // PolynomialDecay
  bool cycle = false;                            // PolynomialDecay
  std::vector<int64_t> boundaries;               // PiecewiseConstantDecay
  std::vector<double> values;

  bool operator==(const ScheduleSpec&) const = default;
};

struct OptimizerSpec {
  OptimizerKind kind = OptimizerKind::adam;
  float learning_rate = 1e-3f;  // Keras: SGD 0.01, the others 0.001; a schedule's initial rate
  std::optional<ScheduleSpec> schedule;  // learning_rate as a schedule
  // Adam, AdamW, Adamax, Nadam, Lion (whose beta_2 is 0.99), as written (see optimizer_math.h)
  double beta_1 = 0.9, beta_2 = 0.999;
  float epsilon = 1e-7f;                   // every optimizer but SGD
  bool amsgrad = false;                    // Adam, AdamW
  float momentum = 0.f;                    // SGD, RMSprop
  bool nesterov = false;                   // SGD
  double rho = 0.9;                        // RMSprop
  bool centered = false;                   // RMSprop
  float initial_accumulator_value = 0.1f;  // Adagrad
  float weight_decay = 0.f;                // every optimizer (Keras: None, AdamW 0.004); 0 is none
  ClipKind clip = ClipKind::none;          // clipnorm, global_clipnorm or clipvalue: at most one
  float clip_value = 0.f;

  bool operator==(const OptimizerSpec&) const = default;
};

// ---- Losses and metrics ---------------------------------------------------------------------

struct LossSpec {
  LossSpec(Loss loss = Loss::mse) : kind(loss) {}  // a loss by its kind, with Keras's defaults
  Loss kind;
  bool from_logits = false;  // the cross-entropies: the output layer is linear, its outputs logits
  double label_smoothing = 0;  // binary and categorical cross-entropy, in [0, 1]
  double delta = 1.0;          // huber

  bool operator==(const LossSpec&) const = default;
};

// A metric a model reports beside its loss: its name (the key of its values in the results, as in
// Keras's History: "accuracy", "mae", ...) and what it computes.
struct MetricSpec {
  std::string name;
  Metric kind = Metric::binary_accuracy;
  bool operator==(const MetricSpec&) const = default;
};

// ---- Fit and its callbacks --------------------------------------------------------------------

// keras.callbacks' monitor mode: min, max, or auto (max for accuracies, min for the rest).
enum class MonitorMode { automatic, min, max };
inline constexpr Named<MonitorMode> kMonitorModeNames[] = {
    {"auto", MonitorMode::automatic}, {"min", MonitorMode::min}, {"max", MonitorMode::max}};

// keras.callbacks.EarlyStopping, with its defaults.
struct EarlyStoppingSpec {
  std::string monitor = "val_loss";
  double min_delta = 0;
  int patience = 0;
  MonitorMode mode = MonitorMode::automatic;
  std::optional<double> baseline;
  bool restore_best_weights = false;
  int start_from_epoch = 0;
  bool operator==(const EarlyStoppingSpec&) const = default;
};

// keras.callbacks.ReduceLROnPlateau, with its defaults.
struct ReduceLROnPlateauSpec {
  std::string monitor = "val_loss";
  double factor = 0.1;
  int patience = 10;
  MonitorMode mode = MonitorMode::automatic;
  double min_delta = 1e-4;
  int cooldown = 0;
  double min_lr = 0;
  bool operator==(const ReduceLROnPlateauSpec&) const = default;
};

struct FitSpec {
  FitSpec(int epochs = 1, int batch_size = 32, double validation_split = 0, bool shuffle = true)
      : epochs(epochs),
        batch_size(batch_size),
        validation_split(validation_split),
        shuffle(shuffle) {}
  int epochs;
  int batch_size;
  double validation_split;  // the last fraction of the training rows, taken before shuffling
  bool shuffle;
  // Keras's fit(sample_weight=...): each row of the data holds its weight after its targets (a CSV
  // row's last column, a y.npy's last column), and the loss of a row is multiplied by it, in
  // training and in evaluation.
  bool sample_weight = false;
  // Keras's fit(class_weight=...): each training row's loss is multiplied by its class's weight
  // (data/dataset.h class_weights_of); validation and test rows are not weighted, as in Keras.
  // Never together with sample_weight.
  ClassWeights class_weight;
  std::optional<EarlyStoppingSpec> early_stopping;
  std::optional<ReduceLROnPlateauSpec> reduce_lr_on_plateau;

  bool operator==(const FitSpec&) const = default;
};

// The host input pipeline of a model with preprocessing (tf.data's num_parallel_calls and
// prefetch): `workers` host threads prepare the next batches (gather, preprocess) into `prefetch`
// ring slots while the current step runs. Without preprocessing it is not used: the batches are
// read from the resident data set.
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

// "device": the model's share of its GPU's SMs, where its mode can give one (the study's
// --sm-partitions and --sm-share are every model's, these its own; the cuda backend only).
struct DeviceShare {
  // Streams and packed modes: a green context of its own with this many SMs (rounded up to the
  // driver's granularity); absent: --sm-partitions' partition, or the whole GPU.
  std::optional<int> sms;
  // Processes mode under MPS: its worker's CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, 1 to 100, the share
  // of the SMs its kernels may occupy at once; absent: --sm-share's, or all of them.
  std::optional<int> sm_share;

  bool operator==(const DeviceShare&) const = default;
};

struct ModelSpec {
  std::string name = "model";
  std::string data = "fashion-mnist";  // default data source, overridden by --data
  int input = 0;
  std::vector<LayerSpec> layers;
  LossSpec loss;
  // What it reports beside the loss, as the spec lists them; nullopt where it lists none:
  // metric_list() is then a classification loss's accuracy.
  std::optional<std::vector<MetricSpec>> metrics;
  OptimizerSpec optimizer;
  FitSpec fit;
  uint64_t seed = 0;
  MemorySpec memory;
  // Target columns at the end of each CSV row: 1 (a class index, or the one output's target), or
  // one per output unit (multi-output regression, multi-label binary cross-entropy, one-hot labels
  // for categorical cross-entropy).
  int targets = 1;
  // "input_shape": [height, width, channels], for image preprocessing
  std::optional<ImageShape> input_shape;
  Preprocessing preprocessing;  // applied to training batches only; empty: none
  PipelineSpec pipeline;
  DeviceShare device_share;  // "device"

  // The host threads its input pipeline runs beside its training: pipeline.workers with
  // preprocessing, else none (nn/input_pipeline.h).
  int pipeline_threads() const { return preprocessing.empty() ? 0 : pipeline.workers; }
  // The width of layer i's output: its units for a Dense, the width it reads for the others.
  int width(size_t layer) const;
  int outputs() const { return width(layers.size() - 1); }
  // The target columns the loss reads per row: a class index for sparse categorical cross-entropy,
  // `targets` (a class index or one-hot labels) for categorical cross-entropy, one per output for
  // the rest.
  int target_cols() const;
  // What the column after each row's targets holds (fit.sample_weight, fit.class_weight), and the
  // columns of a row of y with it.
  RowWeights row_weights() const;
  int y_cols() const { return target_cols() + (row_weights() == RowWeights::none ? 0 : 1); }
  // Whether the loss reads `columns` label columns a row from this model's outputs (Keras's rule):
  // sparse categorical cross-entropy one (class indices), categorical cross-entropy one (class
  // indices) or one per output (one-hot or soft labels), every other loss one per output. The spec
  // (`targets`) and a data set's labels are both checked by it.
  bool takes_label_columns(int columns) const;
  // The output's activation: the last layer's (a Dense or an Activation).
  Activation output_activation() const { return layers.back().activation; }
  // The metrics it reports: those listed, or without a list a classification loss's accuracy
  // (binary for binary_crossentropy, categorical or sparse categorical for theirs), named
  // "accuracy", and none for the regression losses.
  std::vector<MetricSpec> metric_list() const;
  // The index in metric_list() of the first accuracy, or -1: the accuracy the study's tables show.
  int accuracy_metric() const;
  bool has_accuracy() const { return accuracy_metric() >= 0; }
  // Every field: what parse_model_spec(to_json(spec)) gives back.
  bool operator==(const ModelSpec&) const = default;
};

// Validates strictly; every problem is a UserError of one line that names
// `source` (a file name), the JSON path and what is allowed.
ModelSpec parse_model_spec(const nlohmann::json& json, const std::string& source);
// The spec as JSON that parse_model_spec reads back to an equal spec, every key written
// (input_shape and preprocessing only when the spec has them): what a child process is sent (a
// float's value crosses exactly: JSON numbers are doubles).
nlohmann::json to_json(const ModelSpec& spec);
// Reads a JSON file (a spec, a sweep): a regular file of at most 16 MiB; anything else, or invalid
// JSON, is a UserError naming the file (`what` says which kind of file it should be).
nlohmann::json read_json_file(const std::string& path, const std::string& what);
// Reads and parses a spec file; a missing file or invalid JSON is a UserError too.
ModelSpec load_model_spec(const std::string& path);

const char* to_string(Activation a);
const char* to_string(Loss l);
const char* to_string(LayerKind k);

// What a spec takes, as the reference `multifit train --help` lists it, from the tables the parser
// reads: each family's names in its table's order, a value's other names in parentheses ("swish
// (silu)"), and each optimizer with its own settings' Keras defaults ("sgd (momentum 0, nesterov
// false, learning_rate 0.01)": its learning rate and weight decay where they differ from Adam's).
std::vector<std::string> activation_names();
// Each initializer with its settings' Keras defaults ("random_uniform (minval -0.05, maxval
// 0.05)").
std::vector<std::string> initializer_entries();
std::vector<std::string> loss_names();
std::vector<std::string> metric_names();
std::vector<std::string> optimizer_entries();
// Each schedule with its settings, a default beside each that has one ("PolynomialDecay
// (initial_learning_rate, decay_steps, end_learning_rate 0.0001, power 1, cycle false)").
std::vector<std::string> schedule_entries();

// Keras's classes a spec takes, from the same tables, for the Python package's multifit.keras,
// which makes a class of each: {"optimizers", "schedules", "losses", "metrics", "initializers",
// "regularizers"}, each a list of {"class_name", "identifier" (null where Keras has none: a
// schedule), "positional": the settings Keras's signature takes by position, in its order}. A
// loss's or metric's other identifiers ("mse") are entries of their own, with the same class.
nlohmann::json keras_classes();

}  // namespace mf
