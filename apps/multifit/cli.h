#pragma once
// The multifit command line as a function: `multifit ARGS...` run in this process. The program's
// main is this, and the Python package runs `multifit.run` through it, so that its options, checks
// and messages are the command line's by construction.
#include <string>

#include "study/job.h"

namespace mf {

// What an in-process caller (the Python package) gives `multifit run`, which a command line cannot.
struct RunHooks {
  // Rules on the trials after each epoch in place of a sweep's scheduler (RunOptions::judge: the
  // Optuna pruner); `run` refuses it with a scheduler, a mode that trains outside this process,
  // mpirun, --shard, --resume, --solo and --repeat.
  RungJudge* judge = nullptr;
  StatusSink status;  // RunOptions::status: the run's status, in place of its status lines
};

// Parses argv (argv[0] the program's name) and runs the command; returns its exit code (0; 1 for a
// failure of the machine; 2 for a mistake in what was given; 130 when interrupted). A mistake is
// one line: printed on stderr as "multifit: error: LINE", or, with `mistake_line`, stored there
// and not printed. What the command itself prints (its progress, tables and notes) goes to stdout
// and stderr as ever. `hooks` are what an in-process caller gives `multifit run`.
int cli_main(int argc, char** argv, std::string* mistake_line = nullptr,
             const RunHooks& hooks = {});

}  // namespace mf
