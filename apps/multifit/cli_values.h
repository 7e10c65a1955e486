#pragma once
// Command-line values shared by the commands: validators that say what is allowed, and the
// backend options.
#include <CLI/CLI.hpp>

#include "backends/factory.h"
#include "study/job.h"

namespace mf {

// A whole number from `low` to `high`.
CLI::Validator whole_number(long long low, long long high);
// A float > 0 that stays finite and above 0 as a float (the spec's rule for learning_rate).
CLI::Validator positive_float();
// A seed: a whole number from 0 to 2^64 - 1, digits only (so -1 does not wrap around).
CLI::Validator seed_number();
// --epochs and --batch-size: replace the spec's (every model's, for a sweep).
void add_fit_overrides(CLI::App& cmd, SpecOverrides& overrides);
// --backend, --gemm, --activations and --graphs.
void add_backend_options(CLI::App& cmd, BackendOptions& backend);

}  // namespace mf
