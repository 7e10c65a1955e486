#pragma once
// The subcommands of the multifit CLI. Each registers its options and returns
// the function that runs it (an exit code).
#include <functional>

#include <CLI/CLI.hpp>

namespace mf {

using Command = std::function<int()>;

Command add_train_command(CLI::App& app);
class RungJudge;  // nn/fit.h
// judge: cli_main's, set as the run's RunOptions::judge
Command add_run_command(CLI::App& app, RungJudge* judge = nullptr);
// the parts of one sweep (run --shard's documents, journals) made one
Command add_merge_command(CLI::App& app);
Command add_info_command(CLI::App& app);
Command add_worker_command(CLI::App& app);  // a model of a processes-mode run, in its own process

}  // namespace mf
