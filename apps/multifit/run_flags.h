#pragma once
// `multifit run`'s flags: their names, help texts and value checks (CLI11), read into RunArgs.
#include <CLI/CLI.hpp>

#include "apps/multifit/run_args.h"

namespace mf {

// Adds the `run` subcommand to `app`, its flags read into `args` (which must outlive the parse).
CLI::App* add_run_flags(CLI::App& app, RunArgs& args);
// After the parse: which of the flags whose defaults cannot tell were given (RunArgs::*_given).
void read_given_flags(const CLI::App& run, RunArgs& args);

}  // namespace mf
