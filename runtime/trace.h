#pragma once
// A timeline of a run as a Chrome/Perfetto trace (the JSON "Trace Event Format"): open it in
// ui.perfetto.dev or chrome://tracing to see each model's epochs and steps side by side.
#include <string>
#include <vector>

#include "runtime/timeline.h"

namespace mf {

struct TraceTrack {
  std::string name;  // the model's name: one track (thread) per model
  int process = 0;   // the OS process id that ran it (processes mode: several)
  // training steps (or batches prepared: `slice` names them), none overlapping
  std::vector<Interval> steps;
  std::vector<Interval> epochs;  // epochs, drawn as enclosing slices
  std::string slice = "step";    // the name of each of `steps`' slices
};

// Writes {"traceEvents": [...], "displayTimeUnit": "ms"} to `path` (a temporary file, then renamed,
// so a reader never sees half of it: runtime/output_file.h): per track a thread_name metadata
// event, then one complete event ("ph": "X", "ts" and "dur" in microseconds from `origin_s`) per
// epoch ("epoch N", N from 1) and per step (named by the track's `slice`); tid = the track's index
// + 1, pid = its process. `-` writes it to standard output. Throws SystemError naming the path and
// the OS's reason when it cannot be written.
void write_trace(const std::vector<TraceTrack>& tracks, double origin_s, const std::string& path);

}  // namespace mf
