#pragma once
// What a command writes besides its lines and tables, the same for `train` and `run`: --json (the
// result document), --csv (a row per model and mode) and --trace (a Chrome/Perfetto trace); each
// may be `-`, standard output.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "runtime/output_path.h"
#include "study/report/report.h"

namespace mf {

struct OutputFiles {
  std::string json, csv, trace;  // "" when not asked for
};

// --json, --csv and --trace.
void add_output_options(CLI::App& cmd, OutputFiles& files);

// Before any work: each file's path passes check_output_path, and no output overwrites one of
// `inputs`, another of the files or one of `other_outputs` (train's --save, whose path its writer
// checks); at most one of them is `-`. Throws UserError. When one is `-`, standard output is set
// aside for it: what the command prints there (its tables) goes to stderr (take_standard_output).
void prepare_output_files(const OutputFiles& files, const std::vector<NamedFile>& inputs,
                          const std::vector<NamedFile>& other_outputs = {});

// Writes each file asked for, each on its own: one that cannot be written is one line on stderr
// ("multifit: error: r.json: cannot write the result file: No space left on device") and the others
// are still written. Returns the command's `exit_code` made worse (worse_exit_code) by 1 when one
// failed. A trace needs the runs' step timelines (RunOptions::timeline).
int write_output_files(const std::vector<RunReport>& runs, const OutputFiles& files, int exit_code);

}  // namespace mf
