#include "study/report/busy_cost.h"

#include <cstdio>
#include <string>

#include "study/report/answer.h"
#include "study/report/repeats.h"

namespace mf {
namespace {

// A run whose timings can be judged: measured, on a quiet machine, for long enough.
bool quiet(const RunReport& run) { return run.machine && why_unjudged(run).empty(); }

// "run 2", "runs 2 and 4", "runs 1, 2 and 4".
std::string runs_words(const std::vector<int>& repeats) {
  std::string words = repeats.size() == 1 ? "run " : "runs ";
  for (size_t i = 0; i < repeats.size(); ++i)
    words += (i == 0 ? "" : i + 1 == repeats.size() ? " and " : ", ") + std::to_string(repeats[i]);
  return words;
}

// --mode auto's calibration of `mode`, where its timings can be judged (a choice journaled before
// calibrations recorded that has no verdict, so no figure).
std::optional<double> quiet_calibration(const nlohmann::json& auto_choice,
                                        const std::string& mode) {
  if (!auto_choice.is_object() || !auto_choice.contains("calibration")) return std::nullopt;
  for (const nlohmann::json& c : auto_choice.at("calibration"))
    if (c.value("mode", "") == mode && c.contains("unjudged") && c.at("unjudged").is_null() &&
        c.at("samples_per_s").is_number())
      return c.at("samples_per_s").get<double>();
  return std::nullopt;
}

}  // namespace

void note_busy_costs(std::vector<RunReport>& runs) {
  for (RunReport& run : runs) {
    if (!run.machine) continue;
    run.machine->quiet_samples_per_s.reset();
    run.machine->quiet_from.clear();
    if (run.machine->busy.empty() || !run.samples_per_s) continue;
    std::vector<double> rates;
    std::vector<int> repeats;
    for (const RunReport& other : runs)
      if (other.mode == run.mode && quiet(other) && other.samples_per_s)
        rates.push_back(*other.samples_per_s), repeats.push_back(other.repeat);
    if (const std::optional<Spread> s = spread_of(rates)) {
      run.machine->quiet_samples_per_s = s->median;
      run.machine->quiet_from = runs_words(repeats);
    } else if (const std::optional<double> c = quiet_calibration(run.auto_choice, run.mode)) {
      run.machine->quiet_samples_per_s = c;
      run.machine->quiet_from = "the calibration";
    }
  }
}

std::string busy_cost_words(const RunReport& run) {
  if (!run.machine || run.machine->busy.empty() || !run.machine->quiet_samples_per_s ||
      !run.samples_per_s || *run.machine->quiet_samples_per_s <= 0)
    return "";
  char words[160];
  std::snprintf(words, sizeof words,
                "; it trained at %.2fx the samples/s of its mode quiet (%.0f against %.0f, ",
                *run.samples_per_s / *run.machine->quiet_samples_per_s, *run.samples_per_s,
                *run.machine->quiet_samples_per_s);
  return words + run.machine->quiet_from + ")";
}

}  // namespace mf
