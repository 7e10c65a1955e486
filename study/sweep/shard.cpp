#include "study/sweep/shard.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>

namespace mf {

std::vector<Job> every_nth_job(const std::vector<Job>& jobs, size_t first, size_t step) {
  std::vector<Job> part;
  for (size_t i = first; i < jobs.size(); i += step) part.push_back(jobs[i]);
  return part;
}

const Job* job_at(const std::vector<Job>& jobs, size_t index) {
  const auto at = std::lower_bound(jobs.begin(), jobs.end(), index,
                                   [](const Job& j, size_t i) { return j.index < i; });
  return at != jobs.end() && at->index == index ? &*at : nullptr;
}

SweepIdentity identify_sweep(const Sweep& sweep, const std::vector<Job>& all_jobs) {
  // FNV-1a over each model's text: written out here, so that every build and machine gives the same
  // digits (std::hash promises that for neither). Not a defence against a forgery, only against a
  // mix-up; a zero byte between fields keeps "ab"+"c" apart from "a"+"bc".
  uint64_t hash = 14695981039346656037ull;
  const auto add = [&hash](const std::string& text) {
    for (const char c : text) hash = (hash ^ uint8_t(c)) * 1099511628211ull;
    hash = (hash ^ 0) * 1099511628211ull;
  };
  for (const Job& job : all_jobs) {
    add(job.name);
    add(job.spec ? to_json(*job.spec).dump() : "error: " + job.error);
  }
  // Its scheduler decides which models stop: a journal of another scheduler's verdicts is another
  // run's.
  if (sweep.scheduler) add("scheduler: " + nlohmann::json(*sweep.scheduler).dump());
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016" PRIx64, hash);
  return {sweep.name, all_jobs.size(), digits};
}

}  // namespace mf
