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

// A pipeline's batches, prepared by several workers at once, in lanes in which none overlap (a
// trace's slices on one track must nest): each batch in the first lane free when it began.
std::vector<Track> lanes_of(Track batches) {
  std::sort(batches.begin(), batches.end(),
            [](const Interval& a, const Interval& b) { return a.begin_s < b.begin_s; });
  std::vector<Track> lanes;
  for (const Interval& batch : batches) {
    auto free = std::find_if(lanes.begin(), lanes.end(),
                             [&](const Track& l) { return l.back().end_s <= batch.begin_s; });
    if (free == lanes.end()) free = lanes.insert(lanes.end(), Track{});
    free->push_back(batch);
  }
  return lanes;
}

// One track per model and mode, in the process that ran it, on the clock every process shares, and
// for a model's input pipeline its batches' preparations ("NAME input", "NAME input 2", ... as
// several workers overlap).
void write_trace_file(const std::vector<RunReport>& runs, const std::string& path) {
  std::vector<TraceTrack> tracks;
  double origin = INFINITY;
  for (const RunReport& run : runs)
    for (const ModelReport& m : run.models) {
      const std::string name = runs.size() > 1 ? run.mode + ": " + m.name : m.name;
      tracks.push_back({name, m.pid, m.fit.steps, m.fit.epoch_spans});
      if (!m.fit.steps.empty()) origin = std::min(origin, m.fit.steps.front().begin_s);
      const std::vector<Track> lanes = lanes_of(m.fit.input_spans);
      for (size_t lane = 0; lane < lanes.size(); ++lane) {
        std::string track = name + " input";
        if (lane > 0) track.append(" ").append(std::to_string(lane + 1));
        tracks.push_back({track, m.pid, lanes[lane], {}, "batch"});
        // the first batches precede the first step
        origin = std::min(origin, lanes[lane].front().begin_s);
      }
    }
  write_trace(tracks, std::isfinite(origin) ? origin : 0, path);
}

}  // namespace

void add_output_options(CLI::App& cmd, OutputFiles& files) {
  cmd.add_option("--json", files.json, "Write the result document here (-: standard output)");
  cmd.add_option("--csv", files.csv,
                 "Write one row per model (and mode) here (-: standard output)");
  cmd.add_option("--trace", files.trace,
                 "Write a Chrome/Perfetto trace here: one track per model (-: standard output)");
}

void prepare_output_files(const OutputFiles& files, const std::vector<NamedFile>& inputs,
                          const std::vector<NamedFile>& other_outputs) {
  std::vector<NamedFile> outputs = {
      {"--json", files.json}, {"--csv", files.csv}, {"--trace", files.trace}};
  for (const NamedFile& output : outputs) check_output_path(output.what, output.path);
  // checked where they are written
  outputs.insert(outputs.end(), other_outputs.begin(), other_outputs.end());
  check_distinct_files(inputs, outputs);
  if (std::any_of(outputs.begin(), outputs.end(),
                  [](const NamedFile& f) { return is_standard_output(f.path); }))
    take_standard_output();
}

int write_output_files(const std::vector<RunReport>& runs, const OutputFiles& files,
                       int exit_code) {
  const auto write = [&](const std::string& path, const std::function<void()>& write_file) {
    if (path.empty()) return;
    try {
      write_file();
    } catch (const SystemError& e) {
      std::fprintf(stderr, "multifit: error: %s\n", e.what());
      exit_code = worse_exit_code(exit_code, kExitFailure);
    }
  };
  write(files.json, [&] { write_json(runs, files.json); });
  write(files.csv, [&] { write_csv(runs, files.csv); });
  write(files.trace, [&] { write_trace_file(runs, files.trace); });
  return exit_code;
}

}  // namespace mf
