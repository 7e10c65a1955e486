#pragma once
// The subcommands of the multifit CLI. Each registers its options and returns
// the function that runs it (an exit code).
#include <functional>

#include <CLI/CLI.hpp>

#include "apps/multifit/cli.h"

namespace mf {

using Command = std::function<int()>;

Command add_train_command(CLI::App& app);
// hooks: cli_main's, set in the run's RunOptions
Command add_run_command(CLI::App& app, const RunHooks& hooks = {});
// the parts of one sweep (run --shard's documents, journals) made one
Command add_merge_command(CLI::App& app);
Command add_info_command(CLI::App& app);
Command add_worker_command(CLI::App& app);  // a model of a processes-mode run, in its own process

}  // namespace mf
