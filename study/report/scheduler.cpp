// What a sweep's scheduler did, from its models' reports alone: the same for a run that trained
// them all and for one resumed from its journal.
#include <algorithm>
#include <cmath>
#include <map>

#include "study/report/report.h"

namespace mf {

SchedulerReport summarize_scheduler(const SchedulerSpec& spec,
                                    const std::vector<ModelReport>& models) {
  SchedulerReport out;
  out.spec = spec;
  // (bracket, epochs) -> the metric of each trial judged
  std::map<std::pair<int, int>, std::vector<double>> values;
  std::map<std::pair<int, int>, RungSummary> rungs;
  for (const ModelReport& m : models) {
    out.samples += m.samples;
    if (m.settings) out.full_samples += m.train_rows * m.settings->epochs;
    for (const RungResult& r : m.fit.rungs) {
      const std::pair<int, int> key{spec.bracket_of(m.index), r.epochs};
      RungSummary& rung = rungs[key];
      rung.bracket = key.first, rung.epochs = key.second;
      ++rung.trials;
      rung.kept += r.kept;
      if (!std::isnan(r.value)) values[key].push_back(r.value);
    }
  }
  for (auto& [key, rung] : rungs) {
    std::vector<double>& v = values[key];
    if (!v.empty()) {
      std::sort(v.begin(), v.end());
      const bool max = spec.maximize;
      rung.best = max ? v.back() : v.front();
      rung.worst = max ? v.front() : v.back();
      rung.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    }
    out.rungs.push_back(rung);
  }
  return out;
}

}  // namespace mf
