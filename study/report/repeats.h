#pragma once
// --repeat N: a sweep's modes run N times, interleaved (serial, streams, ..., serial, streams,
// ...), so that one run on a shared machine cannot mislead: each mode's figures over its runs as
// their median, least and most.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "study/report/report.h"

namespace mf {

struct Spread {
  double median = 0, min = 0, max = 0;  // the median of an even count is the mean of the middle two
};
std::optional<Spread> spread_of(std::vector<double> values);  // absent for none

// The mean of value(m) over the models that have one; absent for none.
template <class F>
std::optional<double> mean_over(const std::vector<ModelReport>& models, F value) {
  double sum = 0;
  int counted = 0;
  for (const ModelReport& m : models)
    if (const std::optional<double> v = value(m)) sum += *v, ++counted;
  return counted ? std::optional<double>(sum / counted) : std::nullopt;
}
// The mean of the run's models' slowdowns, over those that have one; absent for none.
std::optional<double> mean_slowdown(const RunReport& run);

// One mode's repeated runs: how many, and each figure's spread (absent where no run has it):
// wall_s, startup_s, train_s, samples_per_s, speedup_vs_serial and mean_slowdown, in that order.
struct ModeSpread {
  std::string mode;
  int runs = 0;
  std::vector<std::pair<std::string, std::optional<Spread>>> figures;
  std::optional<Spread> of(std::string_view figure) const;  // absent too for a figure not listed
};
// Per mode, in the order of its first run.
std::vector<ModeSpread> spread_by_mode(const std::vector<RunReport>& runs);

// {"mode": ..., "runs": N, "wall_s": {"median", "min", "max"}, ...}; a figure no run has is null.
void to_json(nlohmann::json& j, const ModeSpread& spread);

}  // namespace mf
