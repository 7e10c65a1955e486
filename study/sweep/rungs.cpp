#include "study/sweep/rungs.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "study/report/report.h"

namespace mf {
namespace {

// numpy.percentile's default (linear) of `sorted`, ascending and not empty, at q in [0, 100].
double percentile(const std::vector<double>& sorted, double q) {
  const double at = q / 100 * double(sorted.size() - 1);
  const size_t low = size_t(std::floor(at));
  const size_t high = std::min(low + 1, sorted.size() - 1);
  return sorted[low] + (sorted[high] - sorted[low]) * (at - double(low));
}

}  // namespace

RungJudge::Verdict rung_verdict(const SchedulerSpec& spec, double value,
                                std::vector<double> earlier) {
  using V = RungJudge::Verdict;
  if (std::isnan(value)) return V::stop;
  std::erase_if(earlier, [](double v) { return std::isnan(v); });
  const double rf = spec.reduction_factor;
  if (spec.type == SchedulerKind::successive_halving) {
    // Optuna's _is_trial_promotable_to_next_rung: the best n // rf of the n values, its own among
    // them.
    earlier.push_back(value);
    std::sort(earlier.begin(), earlier.end());
    const size_t promoted = std::max<size_t>(1, earlier.size() / size_t(spec.reduction_factor));
    return (spec.maximize ? value >= earlier[earlier.size() - promoted]
                          : value <= earlier[promoted - 1])
               ? V::go_on
               : V::stop;
  }
  // Ray Tune's ASHA (_Bracket.cutoff and on_result): the (1 - 1/rf) quantile of the earlier values,
  // of their negatives where smaller is better; worse than it stops.
  if (earlier.empty()) return V::go_on;
  std::sort(earlier.begin(), earlier.end());
  const double q = (1 - 1 / rf) * 100;
  if (spec.maximize) return value < percentile(earlier, q) ? V::stop : V::go_on;
  return value > percentile(earlier, 100 - q) ? V::stop : V::go_on;
}

RungTable::RungTable(SchedulerSpec spec, const std::vector<size_t>& trials)
    : spec_(std::move(spec)) {
  for (size_t t : trials) trials_[t].bracket = spec_.bracket_of(t);
}

bool RungTable::judges(size_t trial, int epochs) const { return spec_.is_rung(trial, epochs); }

std::optional<std::vector<double>> RungTable::earlier(size_t trial, int epochs) const {
  const int bracket = trials_.at(trial).bracket;
  std::vector<double> values;
  for (auto it = trials_.begin(); it != trials_.end() && it->first < trial; ++it) {
    const Trial& other = it->second;
    if (other.bracket != bracket) continue;
    const auto value = other.values.find(epochs);
    if (value != other.values.end())
      values.push_back(value->second);
    else if (!other.ended)
      return std::nullopt;
  }
  return values;
}

RungJudge::Verdict RungTable::judge(size_t trial, int epochs, std::optional<double> value) {
  {
    std::lock_guard lock(mutex_);
    trials_.at(trial).values[epochs] = value.value_or(NAN);
  }
  changed_.notify_all();
  return verdict(trial, epochs);
}

RungJudge::Verdict RungTable::verdict(size_t trial, int epochs) {
  std::lock_guard lock(mutex_);
  const std::optional<std::vector<double>> before = earlier(trial, epochs);
  if (!before) return Verdict::undecided;
  return rung_verdict(spec_, trials_.at(trial).values.at(epochs), *before);
}

void RungTable::wait(double timeout_s) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, std::chrono::duration<double>(timeout_s));
}

void RungTable::ended(size_t trial) {
  {
    std::lock_guard lock(mutex_);
    const auto it = trials_.find(trial);
    if (it != trials_.end()) it->second.ended = true;
  }
  changed_.notify_all();
}

void RungTable::record_ended(const ModelReport& report) {
  {
    std::lock_guard lock(mutex_);
    Trial& trial = trials_.at(report.index);
    for (const RungResult& rung : report.fit.rungs) trial.values[rung.epochs] = rung.value;
    trial.ended = true;
  }
  changed_.notify_all();
}

}  // namespace mf
