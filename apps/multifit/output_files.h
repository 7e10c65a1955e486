#pragma once
// What a command writes besides its lines and tables, the same for `train` and `run`: --json (the
// result document), --csv (a row per model and mode) and --trace (a Chrome/Perfetto trace).
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

// Before any work: each file's folder exists and is writable, and no output overwrites one of
// `inputs`, another of the files or one of `other_outputs` (train's --save). Throws UserError.
void check_output_files(const OutputFiles& files, const std::vector<NamedFile>& inputs,
                        const std::vector<NamedFile>& other_outputs = {});

// Writes each file asked for. A trace needs the runs' step timelines (RunOptions::timeline).
void write_output_files(const std::vector<RunReport>& runs, const OutputFiles& files);

}  // namespace mf
