#include "runtime/trace.h"

#include <nlohmann/json.hpp>

#include "runtime/output_file.h"

namespace mf {

void write_trace(const std::vector<TraceTrack>& tracks, double origin_s, const std::string& path) {
  nlohmann::json events = nlohmann::json::array();
  for (size_t i = 0; i < tracks.size(); ++i) {
    const TraceTrack& track = tracks[i];
    const int tid = int(i) + 1;
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", track.process},
                      {"tid", tid},
                      {"args", {{"name", track.name}}}});
    // A slice [begin, end) in µs from the origin; fractions of a µs are kept (the format allows
    // them).
    auto slice = [&](const std::string& name, const Interval& interval) {
      events.push_back({{"name", name},
                        {"ph", "X"},
                        {"pid", track.process},
                        {"tid", tid},
                        {"ts", (interval.begin_s - origin_s) * 1e6},
                        {"dur", (interval.end_s - interval.begin_s) * 1e6}});
    };
    for (size_t epoch = 0; epoch < track.epochs.size(); ++epoch)
      slice("epoch " + std::to_string(epoch + 1), track.epochs[epoch]);
    for (const Interval& step : track.steps) slice(track.slice, step);
  }
  const nlohmann::json trace = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  write_output_file(path, "the trace file", trace.dump() + '\n');
}

}  // namespace mf
