#include "apps/multifit/output_files.h"

#include <algorithm>
#include <cmath>

#include "runtime/trace.h"

namespace mf {
namespace {

// One track per model and mode, in the process that ran it, on the clock every process shares.
void write_trace_file(const std::vector<RunReport>& runs, const std::string& path) {
  std::vector<TraceTrack> tracks;
  double origin = INFINITY;
  for (const RunReport& run : runs)
    for (const ModelReport& m : run.models) {
      const std::string name = runs.size() > 1 ? run.mode + ": " + m.name : m.name;
      tracks.push_back({name, m.pid, m.fit.steps, m.fit.epoch_spans});
      if (!m.fit.steps.empty()) origin = std::min(origin, m.fit.steps.front().begin_s);
    }
  write_trace(tracks, std::isfinite(origin) ? origin : 0, path);
}

}  // namespace

void add_output_options(CLI::App& cmd, OutputFiles& files) {
  cmd.add_option("--json", files.json, "Write the result document here");
  cmd.add_option("--csv", files.csv, "Write one row per model (and mode) here");
  cmd.add_option("--trace", files.trace, "Write a Chrome/Perfetto trace here: one track per model");
}

void check_output_files(const OutputFiles& files, const std::vector<NamedFile>& inputs,
                        const std::vector<NamedFile>& other_outputs) {
  check_output_path("--json", files.json);
  check_output_path("--csv", files.csv);
  check_output_path("--trace", files.trace);
  std::vector<NamedFile> outputs = {{"--json", files.json}, {"--csv", files.csv}, {"--trace", files.trace}};
  outputs.insert(outputs.end(), other_outputs.begin(), other_outputs.end());
  check_distinct_files(inputs, outputs);
}

void write_output_files(const std::vector<RunReport>& runs, const OutputFiles& files) {
  if (!files.json.empty()) write_json(runs, files.json);
  if (!files.csv.empty()) write_csv(runs, files.csv);
  if (!files.trace.empty()) write_trace_file(runs, files.trace);
}

}  // namespace mf
