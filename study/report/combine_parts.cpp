#include "study/report/combine_parts.h"

#include <algorithm>
#include <set>
#include <utility>

namespace mf {
namespace {

// Adds `text` to a "; "-joined list of distinct texts ("" adds nothing).
void add_distinct(std::string& list, const std::string& text) {
  if (text.empty()) return;
  for (size_t begin = 0; begin <= list.size();) {
    const size_t end = std::min(list.find("; ", begin), list.size());
    if (!list.empty() && list.compare(begin, end - begin, text) == 0) return;
    begin = end + 2;
  }
  list += (list.empty() ? "" : "; ") + text;
}

}  // namespace

void describe_models(RunReport& run) {
  std::set<std::pair<std::string, std::string>> copies;  // (host:pid, data source)
  for (const ModelReport& m : run.models) {
    if (run.backend.empty()) run.backend = m.backend;
    add_distinct(run.device_name, m.device_name);
    add_distinct(run.device_schedule, m.device_schedule);
    add_distinct(run.data, m.data);
    if (!m.data.empty() && copies.insert({m.host + ":" + std::to_string(m.pid), m.data}).second)
      run.data_bytes += m.data_bytes;
  }
}

// The rules, one figure at a time. The parts' lines keep each part's own figures.
RunReport combine_parts(PartsRan how, const std::vector<PartFigures>& parts,
                        std::vector<ModelReport> models) {
  RunReport run;
  run.models = std::move(models);
  describe_models(run);
  const bool together = how == PartsRan::together;
  run.concurrency = 0;  // none trained, until a part did
  int64_t samples = 0;
  double train_s = 0;
  for (const PartFigures& part : parts) {
    (together ? run.ranks : run.shards).push_back(part.line);
    // Max: the run lasts as long as its longest part. Ranks end together; parts run apart would
    // take that long side by side.
    if (part.line.wall_s) run.wall_s = std::max(run.wall_s, *part.line.wall_s);
    // Max: a peak of resident memory is one process's own (VmHWM), the largest part's.
    run.host_peak_rss_bytes = std::max(run.host_peak_rss_bytes, part.host_peak_rss_bytes);
    // Sum: every part's workers are processes of their own, as a part's are among themselves.
    if (part.workers_peak_rss_bytes)
      run.workers_peak_rss_bytes =
          run.workers_peak_rss_bytes.value_or(0) + *part.workers_peak_rss_bytes;
    // Sum: each part took its own models from its own journal.
    run.resumed_models += part.resumed_models;
    if (together) {
      // Sum: side by side, the ranks train their models and threads at the same time.
      run.concurrency += part.concurrency;
      if (part.training_threads)
        run.training_threads = run.training_threads.value_or(0) + *part.training_threads;
      // Max: started together, the run is started when its slowest rank is, and trains until its
      // last one ends; its throughput is every rank's rows (sum) over that time.
      if (part.line.startup_s)
        run.startup_s = std::max(run.startup_s.value_or(0), *part.line.startup_s);
      if (part.train_s) train_s = std::max(train_s, *part.train_s);
      samples += part.samples;
    } else {
      // Max: apart, no part is known to have trained beside another: the most that one part trained
      // at once. No start-up or training time is the whole run's: each part's is in its line.
      run.concurrency = std::max(run.concurrency, part.concurrency);
      if (part.training_threads)
        run.training_threads = std::max(run.training_threads.value_or(0), *part.training_threads);
    }
  }
  if (samples > 0 && train_s > 0) {
    run.train_s = train_s;
    run.samples_per_s = double(samples) / train_s;
  }
  run.concurrency_reason =
      together
          ? std::to_string(parts.size()) +
                " ranks, each training at most its own concurrency at once (rank 0: " +
                (parts.empty() ? "" : parts.front().concurrency_reason) + ")"
          : "merged from " + std::to_string(parts.size()) +
                " parts: the most that one part trained at once (each part's reason is in its document)";
  return run;
}

}  // namespace mf
