#pragma once
// The multifit command line as a function: `multifit ARGS...` run in this process. The program's
// main is this, and the Python package runs `multifit.run` through it, so that its options, checks
// and messages are the command line's by construction.
#include <string>

namespace mf {

class RungJudge;  // nn/fit.h

// Parses argv (argv[0] the program's name) and runs the command; returns its exit code (0; 1 for a
// failure of the machine; 2 for a mistake in what was given; 130 when interrupted). A mistake is
// one line: printed on stderr as "multifit: error: LINE", or, with `mistake_line`, stored there
// and not printed. What the command itself prints (its progress, tables and notes) goes to stdout
// and stderr as ever. `judge`, where given, rules on the trials of `multifit run` after each epoch
// in place of a sweep's scheduler (study/job.h's RunOptions::judge): an in-process caller's, the
// Python package's Optuna pruner; `run` refuses it with a scheduler, a mode that trains outside
// this process, mpirun, --shard and --resume.
int cli_main(int argc, char** argv, std::string* mistake_line = nullptr,
             RungJudge* judge = nullptr);

}  // namespace mf
