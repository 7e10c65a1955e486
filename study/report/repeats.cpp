#include "study/report/repeats.h"

#include <algorithm>

namespace mf {
namespace {

// The figures a repeated run is summed up by, and how each is read from a run.
struct Figure {
  const char* name;
  std::optional<double> (*of)(const RunReport&);
};
const Figure kFigures[] = {
    {"wall_s", [](const RunReport& r) { return std::optional<double>(r.wall_s); }},
    {"startup_s", [](const RunReport& r) { return r.startup_s; }},
    {"train_s", [](const RunReport& r) { return r.train_s; }},
    {"samples_per_s", [](const RunReport& r) { return r.samples_per_s; }},
    {"speedup_vs_serial", [](const RunReport& r) { return r.speedup_vs_serial; }},
    {"mean_slowdown", mean_slowdown},
};

}  // namespace

std::optional<Spread> spread_of(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  return Spread{median, values.front(), values.back()};
}

std::optional<double> mean_slowdown(const RunReport& run) {
  return mean_over(run.models, [](const ModelReport& m) { return m.slowdown; });
}

std::optional<Spread> ModeSpread::of(std::string_view figure) const {
  for (const auto& [name, spread] : figures)
    if (name == figure) return spread;
  return std::nullopt;
}

std::vector<ModeSpread> spread_by_mode(const std::vector<RunReport>& runs) {
  std::vector<std::string> modes;
  for (const RunReport& run : runs)
    if (std::find(modes.begin(), modes.end(), run.mode) == modes.end()) modes.push_back(run.mode);
  std::vector<ModeSpread> spreads;
  for (const std::string& mode : modes) {
    ModeSpread spread{mode, 0, {}};
    for (const RunReport& run : runs) spread.runs += run.mode == mode;
    for (const Figure& figure : kFigures) {
      std::vector<double> values;
      for (const RunReport& run : runs)
        if (run.mode == mode)
          if (const std::optional<double> v = figure.of(run)) values.push_back(*v);
      spread.figures.emplace_back(figure.name, spread_of(values));
    }
    spreads.push_back(std::move(spread));
  }
  return spreads;
}

void to_json(nlohmann::json& j, const ModeSpread& spread) {
  j = {{"mode", spread.mode}, {"runs", spread.runs}};
  for (const auto& [name, s] : spread.figures)
    j[name] = s ? nlohmann::json{{"median", s->median}, {"min", s->min}, {"max", s->max}}
                : nlohmann::json();
}

}  // namespace mf
