#pragma once
// The subcommands of the multifit CLI. Each registers its options and returns
// the function that runs it (an exit code).
#include <functional>

#include <CLI/CLI.hpp>

namespace mf {

using Command = std::function<int()>;

Command add_train_command(CLI::App& app);
Command add_info_command(CLI::App& app);

}  // namespace mf
