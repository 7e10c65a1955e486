#include "apps/multifit/output_files.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "runtime/error.h"
#include "runtime/output_file.h"
#include "runtime/trace.h"
#include "study/model_worker.h"

namespace mf {
namespace {

// One track per model and mode, in the process that ran it, on the clock every process shares, and
// one for a model's input pipeline, its batches' preparations.
void write_trace_file(const std::vector<RunReport>& runs, const std::string& path) {
  std::vector<TraceTrack> tracks;
  double origin = INFINITY;
  for (const RunReport& run : runs)
    for (const ModelReport& m : run.models) {
      const std::string name = runs.size() > 1 ? run.mode + ": " + m.name : m.name;
      tracks.push_back({name, m.pid, m.fit.steps, m.fit.epoch_spans});
      if (!m.fit.input_spans.empty()) tracks.push_back({name + " input", m.pid, m.fit.input_spans, {}});
      if (!m.fit.steps.empty()) origin = std::min(origin, m.fit.steps.front().begin_s);
    }
  write_trace(tracks, std::isfinite(origin) ? origin : 0, path);
}

}  // namespace

void add_output_options(CLI::App& cmd, OutputFiles& files) {
  cmd.add_option("--json", files.json, "Write the result document here (-: standard output)");
  cmd.add_option("--csv", files.csv, "Write one row per model (and mode) here (-: standard output)");
  cmd.add_option("--trace", files.trace,
                 "Write a Chrome/Perfetto trace here: one track per model (-: standard output)");
}

void prepare_output_files(const OutputFiles& files, const std::vector<NamedFile>& inputs,
                          const std::vector<NamedFile>& other_outputs) {
  std::vector<NamedFile> outputs = {{"--json", files.json}, {"--csv", files.csv}, {"--trace", files.trace}};
  for (const NamedFile& output : outputs) check_output_path(output.what, output.path);
  outputs.insert(outputs.end(), other_outputs.begin(), other_outputs.end());  // checked where they are written
  check_distinct_files(inputs, outputs);
  if (std::any_of(outputs.begin(), outputs.end(), [](const NamedFile& f) { return is_standard_output(f.path); }))
    take_standard_output();
}

int write_output_files(const std::vector<RunReport>& runs, const OutputFiles& files, int exit_code) {
  const auto write = [&](const std::string& path, const std::function<void()>& write_file) {
    if (path.empty()) return;
    try {
      write_file();
    } catch (const SystemError& e) {
      std::fprintf(stderr, "multifit: error: %s\n", e.what());
      exit_code = worse_exit_code(exit_code, 1);
    }
  };
  write(files.json, [&] { write_json(runs, files.json); });
  write(files.csv, [&] { write_csv(runs, files.csv); });
  write(files.trace, [&] { write_trace_file(runs, files.trace); });
  return exit_code;
}

}  // namespace mf
