// multifit: train small dense networks on hand-written kernels and measure how
// several of them share one GPU.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "apps/multifit/commands.h"
#include "runtime/error.h"

// Where to look for the flags: the command's own help when a command was given.
static std::string help_for(CLI::App& app) {
  const auto commands = app.get_subcommands();
  return commands.empty() ? "multifit --help" : "multifit " + commands[0]->get_name() + " --help";
}

int main(int argc, char** argv) {
  CLI::App app{"multifit: small dense networks on hand-written CUDA kernels"};
  app.require_subcommand(1);
  const mf::Command train = mf::add_train_command(app);
  const mf::Command run = mf::add_run_command(app);
  const mf::Command info = mf::add_info_command(app);
  const mf::Command worker = mf::add_worker_command(app);
  // A first word that is no flag and no command is a mistyped command ("trian"), not a missing one.
  const auto is_command = [&](const std::string& word) {
    const auto commands = app.get_subcommands({});
    return std::any_of(commands.begin(), commands.end(), [&](const CLI::App* c) { return c->get_name() == word; });
  };
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    std::fprintf(stderr, "multifit: error: unknown command '%s'; the commands are train, run and info\n", argv[1]);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError&) {
    // CLI11 lists what it could not place, last first ("3 --epoch"); a user wants the flag named.
    const std::vector<std::string> extras = app.remaining(true);
    const auto flag = std::find_if(extras.begin(), extras.end(), [](const std::string& a) { return a.starts_with("-"); });
    if (flag != extras.end())
      std::fprintf(stderr, "multifit: error: unknown flag %s; see '%s'\n", flag->c_str(), help_for(app).c_str());
    else
      std::fprintf(stderr, "multifit: error: unexpected argument %s; see '%s'\n",
                   extras.empty() ? "" : extras.front().c_str(), help_for(app).c_str());
    return 2;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "multifit: error: %s; see '%s'\n", e.what(), help_for(app).c_str());
    return 2;
  }
  try {
    if (app.got_subcommand("train")) return train();
    if (app.got_subcommand("run")) return run();
    if (app.got_subcommand("worker")) return worker();
    return info();
  } catch (const mf::UserError& e) {
    std::fprintf(stderr, "multifit: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "multifit: failure: %s\n", e.what());
    return 1;
  }
}
