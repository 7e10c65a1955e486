// multifit worker NAME: one model of a processes-mode run, in its own process
// (study/modes/processes/protocol.h). Not for users: it is hidden from --help. NAME is only there
// so that ps and top show which model a process trains.
#include "apps/multifit/commands.h"
#include "study/modes/processes/protocol.h"

namespace mf {

Command add_worker_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("worker", "");
  cmd->group("");  // hidden from --help
  cmd->add_option("name", "The model's name, for ps");
  return [] { return run_child_process(); };
}

}  // namespace mf
