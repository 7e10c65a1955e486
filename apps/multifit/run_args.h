#pragma once
// `multifit run`'s command line as parsed (apps/multifit/run_flags.h reads it), before any file is
// opened: the study's options, the outputs, and the flags that shape the run as a whole.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "apps/multifit/output_files.h"
#include "study/runner.h"
#include "study/sweep/shard.h"

namespace mf {

struct RunArgs {
  RunOptions options;  // what every model's run takes; options.models_path is the sweep file
  OutputFiles files;
  std::string mode = "serial";  // a mode's name, "all" or "auto"
  bool solo = false;            // each model alone first, for its slowdown
  // --mode auto: training steps per model in each mode's calibration
  int64_t calibration_steps = 100;
  std::string journal;                    // --journal; empty: OUT.journal beside --json OUT
  std::optional<Shard> shard;             // --shard I/N; absent: the whole sweep
  std::pair<int, std::string> save_best;  // --save-best K DIR, when save_best_given
  bool resume = false;
  int repeat = 1;  // --repeat: every mode's run this many times, interleaved
  // Whether these flags were on the command line (their defaults alone cannot tell).
  bool calibration_steps_given = false, pack_size_given = false, save_best_given = false,
       threads_given = false;
};

}  // namespace mf
