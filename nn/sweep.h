#pragma once
// A sweep: several model specs from one JSON file, for `multifit run`. Three forms:
//
// A grid: the cartesian product of the axes, each applied to the base spec (nn/spec.h):
//
//   {"name": "fmnist-grid",
//    "base": {"name": "fmnist", "input": 784, "layers": [{"units": 256, "activation": "relu"},
//             {"units": 10, "activation": "softmax"}], "loss": "sparse_categorical_crossentropy"},
//    "grid": {"hidden": [[100], [100, 10]], "activation": ["tanh", "relu"]}}
//
//   makes fmnist-h100-tanh, fmnist-h100-relu, fmnist-h100x10-tanh, fmnist-h100x10-relu.
//   Each axis is a non-empty array of values. The axes (nn/sweep_axes.h: hidden, units,
//   activation, dropout, learning_rate, batch_size, seed, epochs) always combine in that table's
//   order, the first varying slowest, whatever their order in the file; each sets keys of the base
//   and adds a name part (h100x10, relu, lr0.001, ...). A model's name is the base's name (else the
//   sweep's), then its parts, joined by '-'. The values are checked by the spec parser, so a bad
//   one is that model's error.
//
// A search: trials drawn from a space of the same axes (nn/sweep_search.h), each named by its
// number, "<base name>-t007":
//
//   {"base": {...}, "search": {"trials": 81, "sampler": "sobol", "space": {"learning_rate":
//   {"log_uniform": [1e-4, 0.1]}}}}
//
// A grid's or a search's model keeps the values it was made with (SweepEntry::values).
//
// A list: each entry a spec object or the path of a spec file, relative to the sweep file's
// folder; with a "base", each entry is merged over it (JSON merge patch, RFC 7386):
//
//   {"name": "seed-pair", "models": ["binary-classifier.json", {"name": "r", "input": 20, ...}]}
//
//   An entry without a name takes its file's stem, or "<sweep name>-<index>" for an object.
//
// Any of the three may have a "scheduler" (nn/scheduler_spec.h), which stops the models that lose
// at a rung. The sweep's name is its "name", else the file's stem. A plain spec file (an object
// with "layers") is a sweep of that one model. Every model's spec.name is its entry's name, and no
// two models share a name. Each spec may name its own data.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/scheduler_spec.h"
#include "nn/spec.h"

namespace mf {

struct SweepEntry {
  std::string name;  // the model's name (derived from the axes for a grid); never empty
  std::optional<ModelSpec> spec;  // absent when this entry is bad; else spec->name == name
  std::string error;              // the one-line UserError message when the entry is bad, else ""
  // A grid's or a search's: the axis values it was made with (axis -> value); empty for a list's.
  nlohmann::json values = nlohmann::json::object();
};

struct Sweep {
  std::string name;                // the sweep's name: its "name" key, else the file's stem
  std::vector<SweepEntry> models;  // in file order (grid: the order described above)
  // "scheduler" (nn/scheduler_spec.h), resolved against the models
  std::optional<SchedulerSpec> scheduler;
};

// Reads a sweep file. A problem with the file as a whole (unreadable, not JSON, no "models" and no
// "grid", an unknown top-level key, a bad axis, more than 2^20 = 1048576 models, a problem every
// model of a grid shares word for word) is a UserError naming the file, the JSON path and what is
// allowed. A problem with one model (a bad spec) is that entry's `error`, so the others still run.
// A plain model spec file (an object with "layers") is a sweep of that one model.
Sweep load_sweep(const std::string& path);

}  // namespace mf
