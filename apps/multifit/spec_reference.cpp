// The spec reference that `multifit train --help` prints: the keys are written here, the names of
// each family (activations, initializers, losses, metrics, optimizers and schedules, with their
// defaults) come from the tables the parser reads (nn/spec.h), so a new entry is listed without an
// edit here.
#include "apps/multifit/spec_reference.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "nn/spec.h"
#include "runtime/names.h"

namespace mf {
namespace {

// The reference's text; each @family@ is replaced by its names, wrapped to kWidth columns with
// continuation lines starting at kColumn, the column of every key's description.
constexpr const char* kTemplate = R"(
A spec (JSON), every key with its default; only layers and loss are required, and input unless a
first layer or an InputLayer gives it. Keras's names throughout: a layer's "type" is its class name,
its keys the class's arguments; an optimizer, loss, metric, schedule, initializer or regularizer is
its Keras string ("adam"), an object with its "name" and settings, or {"class_name": ..., "config":
{...}} as Keras's get_config() writes it. A Keras setting multifit does not have is refused in one
line that says what it does instead.
  "name": "model"                   the model's name in output and results
  "data": "fashion-mnist"           default data source (--data overrides)
  "keras_config": {...} | "m.json"  the model as Keras writes it in place of input, input_shape,
                                    layers, loss, optimizer and metrics: model.to_json()'s object
                                    (or a .keras file's config.json) of a model compiled with a
                                    loss, or the path of a JSON file holding it, from the current
                                    directory; a sweep's model axes do not edit it
  "input": N                        features per row, 1 to 1048576
  "layers": [...]                   in order, the last is the output:
    {"type": "Dense", "units": N, "activation": "linear", "use_bias": true,
     "kernel_initializer": "glorot_uniform", "bias_initializer": "zeros",
     "kernel_regularizer": null, "bias_regularizer": null, "activity_regularizer": null}
                                    activations @activations@.
                                    Initializers, with their settings' defaults: @initializers@.
                                    Regularizers "l1", "l2" (0.01) or {"name": "l1_l2", "l1": 0,
                                    "l2": 0}
    {"type": "Dropout", "rate": R}  R in [0, 1), training only
    {"type": "BatchNormalization", "momentum": 0.99, "epsilon": 0.001, "center": true,
     "scale": true, "beta_initializer": "zeros", "gamma_initializer": "ones",
     "moving_mean_initializer": "zeros", "moving_variance_initializer": "ones"}
    {"type": "Activation", "activation": A}, "ReLU", "ELU", "Softmax", "Flatten"
    {"type": "InputLayer", "shape": [N]}, or "input_shape": [N] on the first layer; an image's
     [H, W, C] where a Flatten comes first (input H x W x C, and "input_shape" below)
  "loss": "mse"                     or {"name": ..., ...}: @losses@.
                                    huber takes "delta": 1.0; categorical_crossentropy reads
                                    one-hot targets, sparse_categorical_crossentropy class indices;
                                    the cross-entropies read a sigmoid or softmax output, or a
                                    linear one with "from_logits": true; binary and categorical
                                    take "label_smoothing": 0 (in [0, 1])
  "metrics": ["accuracy"]           a classification loss's accuracy by default, none for the
                                    others; @metrics@
  "optimizer": "adam"               or {"name": ..., "learning_rate": 0.001, ...}, with its
                                    own settings' defaults: @optimizers@.
                                    Every one takes learning_rate, weight_decay (0 unless listed
                                    above) and one of clipnorm, global_clipnorm, clipvalue.
                                    "learning_rate" may be a schedule, its settings' defaults
                                    beside them: @schedules@
  "fit": {"epochs": 1,              0 evaluates and saves the initial weights
          "batch_size": 32,         rows per step; the last partial batch is a step
          "validation_split": 0,    the last fraction of the rows, in [0, 1)
          "shuffle": true,          a new order every epoch
          "sample_weight": false,   true: each CSV row or y.npy row ends with its weight, which
                                    multiplies its loss (Keras's sample_weight)
          "class_weight": {},       {"0": 1.0, "1": 5.0}: each training row's loss times its
                                    class's weight (1 for a class not named), as Keras's
          "callbacks": []}          EarlyStopping (monitor "val_loss", min_delta 0, patience 0,
                                    mode "auto", baseline null, restore_best_weights false,
                                    start_from_epoch 0), ReduceLROnPlateau (monitor "val_loss",
                                    factor 0.1, patience 10, mode "auto", min_delta 0.0001,
                                    cooldown 0, min_lr 0); monitor loss or a metric, val_ for the
                                    validation rows'
  "targets": 1                      target columns at the end of a CSV row: one per output unit
                                    for multi-output regression, multi-label binary_crossentropy
                                    or one-hot categorical_crossentropy
  "seed": 0                         the initial weights, each epoch's shuffle and Dropout's masks;
                                    synthetic data has a seed of its own (synthetic:KIND:seed=N,
                                    1234 by default)
  "memory": {"limit": "256MiB",     bytes, or a number with B, KB, MB, GB, TB, KiB, MiB, GiB or
                                    TiB (the --memory-limit flag takes only the latter: a unit is
                                    required)
             "mode": "grow"}        grow takes memory as needed, reserve takes the limit at once
  "input_shape": [H, W, C]          none by default (flat rows); a row as an image, channels last,
                                    H x W x C = input: what the Random* operations need
  "preprocessing": []               [{"type": NAME, ...}, ...] on training batches only, in order:
                                    RandomFlip, RandomTranslation, RandomZoom, RandomContrast,
                                    GaussianNoise, HostWork (Keras's names, parameters, defaults)
  "pipeline": {"workers": 1,        with preprocessing only: threads preparing batches, 1 to 64
                                    (tf.data's num_parallel_calls)
               "prefetch": 2}       batches prepared ahead, 1 to 64 (tf.data's prefetch)
  "device": {"sms": K,              cuda, streams and packed modes: a green context of its own
                                    with K SMs (none by default: --sm-partitions' or the GPU)
             "sm_share": P}         cuda, processes mode under MPS: its worker's
                                    CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, 1 to 100 (--sm-share's)
Exit codes: 0 ok; 1 a model diverged or the machine failed; 2 a mistake in a spec, a data file,
a flag or a memory limit (one line on stderr; the --json document is written all the same, unless
the command line itself cannot be read or --json cannot be written).)";
constexpr size_t kWidth = 100;
constexpr size_t kColumn = 36;

// `text` with `tag` replaced by `words` joined by ", ", the rest of the tag's line after them, all
// wrapped at spaces: a line that would pass kWidth goes on at kColumn.
std::string fill(std::string text, const std::string& tag, const std::vector<std::string>& words) {
  const size_t at = text.find(tag);
  const size_t line_start = text.rfind('\n', at) + 1;
  const size_t line_end = text.find('\n', at);
  const std::string rest = joined(words) + text.substr(at + tag.size(), line_end - at - tag.size());
  std::string out = text.substr(line_start, at - line_start);
  size_t column = out.size();
  for (size_t word = 0; word < rest.size();) {
    const size_t end = std::min(rest.find(' ', word), rest.size());
    if (word > 0 && column + 1 + (end - word) > kWidth) {
      out += "\n" + std::string(kColumn, ' ');
      column = kColumn;
    } else if (word > 0) {
      out += ' ';
      ++column;
    }
    out += rest.substr(word, end - word);
    column += end - word;
    word = end + 1;
  }
  return text.replace(line_start, line_end - line_start, out);
}

}  // namespace

std::string spec_reference() {
  std::string text = kTemplate;
  for (auto& [tag, words] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"@activations@", activation_names()},
           {"@initializers@", initializer_entries()},
           {"@losses@", loss_names()},
           {"@metrics@", metric_names()},
           {"@optimizers@", optimizer_entries()},
           {"@schedules@", schedule_entries()}})
    text = fill(std::move(text), tag, words);
  return text;
}

}  // namespace mf
