#pragma once
// A sweep's search: trials drawn from a space of axes (nn/sweep_axes.h), as Keras Tuner's
// RandomSearch and Optuna's samplers draw them, instead of a grid's every combination:
//
//   "search": {"trials": 81, "sampler": "sobol", "seed": 7,
//              "space": {"learning_rate": {"log_uniform": [1e-4, 1e-1]}, "units": {"choice": [32,
//              64, 128]},
//                        "dropout": {"uniform": [0, 0.5]}, "batch_size": {"int_log_uniform": [16,
//                        256]}}}
//
// Distributions: uniform [low, high) and log_uniform (low > 0) for learning_rate and dropout;
// int_uniform [low, high] and int_log_uniform (low >= 1; each integer k as likely as log((k+1)/k))
// for units, batch_size, epochs and seed; choice (one of the values, equally likely) for every
// axis. A float drawn is kept as the float32 the spec stores, in its shortest decimal form.
// Samplers: "random" (the default): a 64-bit Mersenne Twister (std::mt19937_64) seeded with the
// search's seed, trial by trial, each trial's axes in the table's order; "sobol": the Sobol
// sequence (Boost.Random's, Joe and Kuo's direction numbers), one dimension per axis, digitally
// shifted by bits the seed draws (so its first point is not the origin, and another seed gives
// another set of equally spread points: the first 2^k trials still put one point in each 2^-k of
// every axis). The same file and seed give the same trials on every machine.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mf {

// The trials of the "search" object of sweep file `path` over `base`: each an object of axis ->
// value, in the space's axes in the table's order. A bad search (an unknown key, axis, sampler or
// distribution, a range that is empty or reversed, a value of the wrong kind) is a UserError naming
// the file, the JSON path and what is allowed, with "did you mean" for a near miss.
std::vector<nlohmann::json> draw_trials(const std::string& path, const nlohmann::json& search,
                                        const nlohmann::json& base);

}  // namespace mf
