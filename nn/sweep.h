#pragma once
// A sweep: several model specs from one JSON file, for `multifit run`. Two forms:
//
// A grid: the cartesian product of the axes, each applied to the base spec (nn/spec.h):
//
//   {"name": "fmnist-grid",
//    "base": {"name": "fmnist", "input": 784, "layers": [{"units": 256, "activation": "relu"},
//             {"units": 10, "activation": "softmax"}], "loss": "sparse_categorical_crossentropy"},
//    "grid": {"hidden": [[100], [100, 10]], "activation": ["tanh", "relu"]}}
//
//   makes fmnist-h100-tanh, fmnist-h100-relu, fmnist-h100x10-tanh, fmnist-h100x10-relu.
//   Each axis is a non-empty array of values. The axes always combine in this order, the first
//   varying slowest, whatever their order in the file; each sets a key and adds a name part:
//     axis           sets                     name part
//     hidden         the hidden layers        h100x10: the widths joined by x (h0: no hidden layer)
//     activation     their activation         relu (any activation a Dense layer takes)
//     learning_rate  optimizer.learning_rate  lr0.001 (the shortest form that reads back the same)
//     batch_size     fit.batch_size           b32
//     seed           seed                     s7
//     epochs         fit.epochs               e5
//   A hidden value is an array of widths: each is a copy of the base's first hidden block (its first
//   Dense and the layers after it up to the next Dense: Dropout, BatchNormalization, Activation)
//   with that width; the layers before that Dense and the last (output) layer are kept. A base
//   with no hidden Dense gives linear Dense layers. The activation axis sets each hidden
//   Activation layer's activation, and each hidden Dense's that no Activation layer follows before
//   the next Dense (the Dense of a Dense, BatchNormalization, Activation block stays linear).
//   A model's name is the base's name (else the sweep's), then its parts, joined by '-'.
//   The values are checked by the spec parser, so a bad one is that model's error.
//
// A list: each entry a spec object or the path of a spec file, relative to the sweep file's
// folder; with a "base", each entry is merged over it (JSON merge patch, RFC 7386):
//
//   {"name": "seed-pair", "models": ["binary-classifier.json", {"name": "r", "input": 20, ...}]}
//
//   An entry without a name takes its file's stem, or "<sweep name>-<index>" for an object.
//
// The sweep's name is its "name", else the file's stem. A plain spec file (an object with
// "layers") is a sweep of that one model. Every model's spec.name is its entry's name, and no two
// models share a name. Each spec may name its own data.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/spec.h"

namespace mf {

struct SweepEntry {
  std::string name;               // the model's name (derived from the axes for a grid); never empty
  std::optional<ModelSpec> spec;  // absent when this entry is bad; else spec->name == name
  std::string error;              // the one-line UserError message when the entry is bad, else ""
};

struct Sweep {
  std::string name;                // the sweep's name: its "name" key, else the file's stem
  std::vector<SweepEntry> models;  // in file order (grid: the order described above)
};

// Reads a sweep file. A problem with the file as a whole (unreadable, not JSON, no "models" and no "grid", an unknown
// top-level key, a bad axis, more than 2^20 = 1048576 models, a problem every model of a grid shares word for word) is a
// UserError naming the file, the JSON path and what is allowed.
// A problem with one model (a bad spec) is that entry's `error`, so the others still run. A plain model spec file
// (an object with "layers") is a sweep of that one model.
Sweep load_sweep(const std::string& path);

// The hidden axis's name part after its 'h': the widths joined by 'x' (100x10), "0" for no hidden
// layer. The CSV's hidden column writes a model's hidden layers the same way.
std::string hidden_widths_text(const std::vector<std::string>& widths);

}  // namespace mf
