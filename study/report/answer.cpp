#include "study/report/answer.h"

#include <cstdio>
#include <optional>

#include "nn/fit.h"
#include "study/report/repeats.h"

namespace mf {

std::string why_unjudged(const RunReport& run) {
  std::string why;
  if (run.wall_s < kShortestJudged_s) {
    char under[32];
    std::snprintf(under, sizeof under, ", under %g s", kShortestJudged_s);
    why = "wall " + format_duration(run.wall_s) + under;
  }
  if (run.machine && !run.machine->busy.empty())
    why += (why.empty() ? "" : "; ") + std::string("a busy machine: ") + run.machine->busy;
  return why;
}

std::string modes_answer(const std::vector<RunReport>& runs) {
  const std::vector<ModeSpread> spreads = spread_by_mode(runs);
  const ModeSpread* fastest = nullptr;
  for (const ModeSpread& s : spreads)
    if (s.mode != "serial" && s.of("speedup_vs_serial") &&
        (!fastest || s.of("speedup_vs_serial")->median > fastest->of("speedup_vs_serial")->median))
      fastest = &s;
  if (!fastest) return "";
  const double speedup = fastest->of("speedup_vs_serial")->median;
  std::string answer =
      speedup >= 1 ? fastest->mode + " finished " + format_ratio(speedup) + " sooner than serial"
                   : "serial finished first; the fastest of the others, " + fastest->mode +
                         ", took " + format_ratio(1 / speedup) + " as long";
  if (const std::optional<Spread> slowdown = fastest->of("mean_slowdown"))
    answer += slowdown->median >= 1
                  ? "; each model trained " + format_ratio(slowdown->median) + " slower than alone"
                  : "; each model trained in " + format_ratio(slowdown->median) + " its time alone";
  if (fastest->runs > 1) answer += " (medians of " + std::to_string(fastest->runs) + " runs)";
  std::string unjudged;
  for (const RunReport& run : runs)
    if (const std::string why = why_unjudged(run);
        !why.empty() && (run.mode == "serial" || run.mode == fastest->mode))
      unjudged += (unjudged.empty() ? "" : "; ") + run.mode +
                  (fastest->runs > 1 ? " run " + std::to_string(run.repeat) : "") + ": " + why;
  return unjudged.empty() ? answer : "not to be judged (" + unjudged + "): " + answer;
}

}  // namespace mf
