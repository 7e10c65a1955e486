#include "study/report/repeats.h"

#include <algorithm>

namespace mf {
namespace {

std::optional<double> figure(const RunReport& run, const std::string& name) {
  if (name == "wall_s") return run.wall_s;
  if (name == "startup_s") return run.startup_s;
  if (name == "train_s") return run.train_s;
  if (name == "samples_per_s") return run.samples_per_s;
  if (name == "speedup_vs_serial") return run.speedup_vs_serial;
  return mean_slowdown(run);
}

}  // namespace

std::optional<Spread> spread_of(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  return Spread{median, values.front(), values.back()};
}

std::optional<double> mean_slowdown(const RunReport& run) {
  double sum = 0;
  int counted = 0;
  for (const ModelReport& m : run.models)
    if (m.slowdown) sum += *m.slowdown, ++counted;
  return counted ? std::optional<double>(sum / counted) : std::nullopt;
}

std::vector<ModeSpread> spread_by_mode(const std::vector<RunReport>& runs) {
  std::vector<std::string> modes;
  for (const RunReport& run : runs)
    if (std::find(modes.begin(), modes.end(), run.mode) == modes.end()) modes.push_back(run.mode);
  std::vector<ModeSpread> spreads;
  for (const std::string& mode : modes) {
    ModeSpread spread{mode, 0, {}};
    for (const RunReport& run : runs) spread.runs += run.mode == mode;
    for (const char* name : kRepeatedFigures) {
      std::vector<double> values;
      for (const RunReport& run : runs)
        if (run.mode == mode)
          if (const std::optional<double> v = figure(run, name)) values.push_back(*v);
      spread.figures.emplace_back(name, spread_of(values));
    }
    spreads.push_back(std::move(spread));
  }
  return spreads;
}

void to_json(nlohmann::json& j, const ModeSpread& spread) {
  j = {{"mode", spread.mode}, {"runs", spread.runs}};
  for (const auto& [name, s] : spread.figures)
    j[name] = s ? nlohmann::json{{"median", s->median}, {"min", s->min}, {"max", s->max}} : nlohmann::json();
}

}  // namespace mf
