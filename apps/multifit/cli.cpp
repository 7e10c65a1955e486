// The multifit command line (apps/multifit/cli.h).
#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "apps/multifit/cli_values.h"
#include "apps/multifit/cli.h"
#include "apps/multifit/commands.h"
#include "runtime/build_info.h"
#include "runtime/error.h"
#include "runtime/mpi_world.h"
#include "runtime/near_miss.h"

namespace {

// The commands a user may give (not the hidden worker).
std::vector<CLI::App*> user_commands(CLI::App& app) {
  std::vector<CLI::App*> commands = app.get_subcommands({});
  std::erase_if(commands, [](const CLI::App* c) { return c->get_group().empty(); });
  return commands;
}

// The long names of a command's flags, without their dashes ("epochs").
std::vector<std::string> flag_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* option : cmd.get_options())
    for (const std::string& name : option->get_lnames()) names.push_back(name);
  return names;
}

// Why a flag is unknown, when that can be said: " (did you mean --epochs?)" for a near miss of the
// command's own flags, " (a flag of multifit run)" for another command's; else "".
std::string unknown_flag_hint(CLI::App& app, const CLI::App& cmd, const std::string& flag) {
  if (!flag.starts_with("--")) return "";
  const std::string name = flag.substr(2, flag.find('=') - 2);  // --epoch=3 names --epoch
  const std::vector<std::string> own = flag_names(cmd);
  if (const std::string meant = mf::near_miss(name, own); !meant.empty())
    return " (did you mean --" + meant + "?)";
  if (&cmd == &app) return "";
  std::vector<std::string> others;
  for (const CLI::App* other : user_commands(app)) {
    const std::vector<std::string> names = flag_names(*other);
    if (other != &cmd && std::find(names.begin(), names.end(), name) != names.end())
      others.push_back("multifit " + other->get_name());
  }
  if (others.empty()) return "";
  std::string list;
  for (size_t i = 0; i < others.size(); ++i)
    list += (i == 0 ? "" : i + 1 == others.size() ? " or " : ", ") + others[i];
  return " (a flag of " + list + ", not of multifit " + cmd.get_name() + ")";
}

// Where to look for the flags: the command's own help when a command was given.
std::string help_for(CLI::App& app) {
  const auto commands = app.get_subcommands();
  return commands.empty() ? "multifit --help" : "multifit " + commands[0]->get_name() + " --help";
}

// A first word that is no flag and no command is a mistyped command ("trian"), not a missing one:
// the line that says so, or "" when `word` is a command.
std::string unknown_command(CLI::App& app, const std::string& word) {
  const auto commands = app.get_subcommands({});
  if (std::any_of(commands.begin(), commands.end(),
                  [&](const CLI::App* c) { return c->get_name() == word; }))
    return "";
  std::vector<std::string> names;
  for (const CLI::App* c : user_commands(app)) names.push_back(c->get_name());
  const std::string meant = mf::near_miss(word, names);
  std::string list;  // "train, run, merge and info"
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return "unknown command '" + word + "'" +
         (meant.empty() ? "" : " (did you mean " + meant + "?)") + "; the commands are " + list;
}

// The line for what CLI11 could not parse. What it could not place it lists last first ("3
// --epoch"); a user wants the flag named. Without a command CLI11 says first that one is missing,
// but a flag it does not know ("multifit --verison") is the mistake to name.
std::string parse_mistake(CLI::App& app, const CLI::ParseError& e) {
  const std::vector<std::string> extras = app.remaining(true);
  const bool unplaced = dynamic_cast<const CLI::ExtrasError*>(&e) ||
                        (app.get_subcommands().empty() && !extras.empty());
  if (!unplaced) return std::string(e.what()) + "; see '" + help_for(app) + "'";
  const auto flag = std::find_if(extras.begin(), extras.end(),
                                 [](const std::string& a) { return a.starts_with("-"); });
  const auto commands = app.get_subcommands();
  CLI::App& cmd = commands.empty() ? app : *commands[0];
  if (flag != extras.end())
    return "unknown flag " + *flag + unknown_flag_hint(app, cmd, *flag) + "; see '" +
           help_for(app) + "'";
  return "unexpected argument " + (extras.empty() ? std::string() : extras.front()) + "; see '" +
         help_for(app) + "'";
}

}  // namespace

namespace mf {

int cli_main(int argc, char** argv, std::string* mistake_line, const RunHooks& hooks) {
  CLI::App app{"multifit: small dense networks on hand-written CUDA kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", describe_build(),
                       "Print the version, the commit and whether the build has CUDA");
  const Command train = add_train_command(app);
  const Command run = add_run_command(app, hooks);
  const Command merge = add_merge_command(app);
  const Command info = add_info_command(app);
  const Command worker = add_worker_command(app);
  // A mistake in what the user gave: said on stderr, exit code 2. Under mpirun every rank makes it
  // alike, so rank 0 alone says it and the others end quietly with 0 (runtime/mpi_world.h:
  // speaks_for_the_job); the hidden worker, a child of some rank, always speaks.
  const bool speaks = (argc > 1 && std::string(argv[1]) == "worker") || speaks_for_the_job();
  const auto mistake = [speaks, mistake_line](const std::string& line) {
    if (!speaks) return 0;
    if (mistake_line)
      *mistake_line = line;
    else
      std::fprintf(stderr, "multifit: error: %s\n", line.c_str());
    return int(kExitMistake);
  };
  if (argc > 1 && argv[1][0] != '-')
    if (const std::string line = unknown_command(app, argv[1]); !line.empty()) return mistake(line);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return mistake(parse_mistake(app, e));
  }
  for (const char* alone : {"train", "merge"})
    if (launched_by_mpi() && app.got_subcommand(alone))
      return mistake(
          std::string("multifit ") + alone +
          " does not run across MPI ranks: under mpirun each rank would do the same work; run it without mpirun (multifit run trains a sweep over the ranks)");
  try {
    if (app.got_subcommand("train")) return train();
    if (app.got_subcommand("run")) return run();
    if (app.got_subcommand("merge")) return merge();
    if (app.got_subcommand("worker")) return worker();
    return info();
  } catch (const UserError& e) {
    return mistake(e.what());
  } catch (const std::exception& e) {  // this process's own failure, said whatever its rank
    const std::optional<int> rank = launched_by_mpi() ? launcher_rank() : std::nullopt;
    std::fprintf(stderr, "multifit: failure: %s%s\n",
                 rank ? ("rank " + std::to_string(*rank) + ": ").c_str() : "", e.what());
    return kExitFailure;
  }
}

}  // namespace mf
