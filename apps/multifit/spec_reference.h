#pragma once
// The spec reference that `multifit train --help` prints: every key, its default and its unit
// (the parser is nn/spec.cpp). It is the one reference: the README points to `multifit train --help`.
namespace mf {

inline constexpr const char* kSpecReference = R"(
A spec (JSON), every key with its default; only input, layers and loss are required:
  "name": "model"                   the model's name in output and results
  "data": "fashion-mnist"           default data source (--data overrides)
  "input": N                        features per row (required)
  "layers": [{"units": N, "activation": "linear"}, ...]
                                    Dense layers, 1 to 1048576 units; activation linear, relu,
                                    sigmoid, tanh, or softmax (last layer only) (required)
  "loss": "mse" | "binary_crossentropy" (sigmoid output) | "sparse_categorical_crossentropy"
                                    (softmax output, labels 0..units-1) (required)
  "optimizer": "adam" | "sgd" | {"name": "adam", "learning_rate": 0.001, "beta_1": 0.9,
                                 "beta_2": 0.999, "epsilon": 1e-7}
                                  | {"name": "sgd", "learning_rate": 0.01, "momentum": 0}
  "fit": {"epochs": 1,              0 evaluates and saves the initial weights
          "batch_size": 32,         rows per step; the last partial batch is a step
          "validation_split": 0,    the last fraction of the rows, in [0, 1)
          "shuffle": true}          a new order every epoch
  "targets": 1                      target columns at the end of a CSV row: one per output unit
                                    for multi-output mse or multi-label binary_crossentropy
  "seed": 0                         the initial weights and each epoch's shuffle; synthetic data
                                    has a seed of its own (synthetic:KIND:seed=N, 1234 by default)
  "memory": {"limit": "256MiB",     bytes, or a number with B, KB, MB, GB, KiB, MiB, GiB (the
                                    --memory-limit flag takes only the latter: a unit is required)
             "mode": "grow"}        grow takes memory as needed, reserve takes the limit at once
  "input_shape": [H, W, C]          none by default (flat rows); a row as an image, channels last,
                                    H x W x C = input: what the Random* operations need
  "preprocessing": []               [{"type": NAME, ...}, ...] on training batches only, in order:
                                    RandomFlip, RandomTranslation, RandomZoom, RandomContrast,
                                    GaussianNoise, HostWork (Keras's names, parameters, defaults)
  "pipeline": {"workers": 1,        with preprocessing only: threads preparing batches, 1 to 64
                                    (tf.data's num_parallel_calls)
               "prefetch": 2}       batches prepared ahead, 1 to 64 (tf.data's prefetch)
Exit codes: 0 ok; 1 a model diverged or the machine failed; 2 a mistake in a spec, a data file,
a flag or a memory limit (one line on stderr; the --json document is written all the same, unless
the command line itself cannot be read or --json cannot be written).)";

}  // namespace mf
