#include "study/report/answer.h"

#include <cstdio>
#include <optional>

#include "study/report/busy_cost.h"
#include "study/report/repeats.h"
#include "runtime/formats.h"

namespace mf {

std::string why_unjudged(const RunReport& run) {
  std::string why;
  if (run.wall_s < kShortestJudged_s) {
    char under[32];
    std::snprintf(under, sizeof under, ", under %g s", kShortestJudged_s);
    why = "wall " + format_duration(run.wall_s) + under;
  }
  if (run.machine && !run.machine->busy.empty())
    why += (why.empty() ? "" : "; ") + std::string("a busy machine: ") + run.machine->busy +
           busy_cost_words(run);
  return why;
}

namespace {

// " with the same 2 cores" where every run shares one budget of cores (the cpu backend's
// arrangement), "" where none says.
std::string budget_words(const std::vector<RunReport>& runs) {
  std::optional<int> cores;
  for (const RunReport& run : runs) {
    if (!run.arrangement || (cores && *cores != run.arrangement->cores)) return "";
    cores = run.arrangement->cores;
  }
  if (!cores) return "";
  return " with the same " + std::to_string(*cores) + (*cores == 1 ? " core" : " cores");
}

// Why `mode`'s runs cannot be judged, "" where every one can: "serial: wall 7ms, under 0.1 s", or
// repeated "serial: 3 of 5 runs, run 2: a busy machine: ..." (the first such run's reason).
std::string unjudged_runs(const std::vector<RunReport>& runs, const std::string& mode) {
  int of = 0, unjudged = 0;
  std::string first;
  for (const RunReport& run : runs) {
    if (run.mode != mode) continue;
    ++of;
    if (const std::string why = why_unjudged(run); !why.empty() && unjudged++ == 0)
      first = "run " + std::to_string(run.repeat) + ": " + why;
  }
  if (unjudged == 0) return "";
  return mode + ": " +
         (of == 1 ? first.substr(first.find(": ") + 2)
                  : std::to_string(unjudged) + " of " + std::to_string(of) + " runs, " + first);
}

}  // namespace

std::string modes_answer(const std::vector<RunReport>& runs) {
  const std::vector<ModeSpread> spreads = spread_by_mode(runs);
  const ModeSpread* fastest = nullptr;
  for (const ModeSpread& s : spreads)
    if (s.mode != "serial" && s.of("speedup_vs_serial") &&
        (!fastest || s.of("speedup_vs_serial")->median > fastest->of("speedup_vs_serial")->median))
      fastest = &s;
  if (!fastest) return "";
  const Spread speedup = *fastest->of("speedup_vs_serial");
  const std::string budget = budget_words(runs);
  const bool repeated = fastest->runs > 1;
  std::string answer;
  if (repeated && speedup.min <= 1 && speedup.max >= 1)
    answer = "no clear difference between " + fastest->mode + " and serial" + budget +
             " (its speedup over serial ranged " + format_ratio(speedup.min) + " to " +
             format_ratio(speedup.max) + ")";
  else if (speedup.median >= 1)
    answer = fastest->mode + " finished " + format_ratio(speedup.median) + " sooner than serial" +
             budget;
  else
    answer = "serial finished first" + budget + "; the fastest of the others, " + fastest->mode +
             ", took " + format_ratio(1 / speedup.median) + " as long";
  // A pack's slowdown is its time over its members' solo times together (report.h): each member
  // took the whole pack's time, so it is said of the pack.
  if (const std::optional<Spread> slowdown = fastest->of("mean_slowdown"))
    answer += fastest->mode == "packed" ? "; each pack took " + format_ratio(slowdown->median) +
                                              " the time its models took alone, one after another"
              : slowdown->median >= 1
                  ? "; each model trained " + format_ratio(slowdown->median) + " slower than alone"
                  : "; each model trained in " + format_ratio(slowdown->median) + " its time alone";
  if (repeated)
    answer += " (medians of " + std::to_string(fastest->runs) + " runs" +
              (speedup.min <= 1 && speedup.max >= 1 ? ")"
                                                    : "; speedup " + format_ratio(speedup.min) +
                                                          " to " + format_ratio(speedup.max) + ")");
  const std::string serial = unjudged_runs(runs, "serial"),
                    other = unjudged_runs(runs, fastest->mode);
  const std::string unjudged = serial + (serial.empty() || other.empty() ? "" : "; ") + other;
  return unjudged.empty() ? answer : "not to be judged (" + unjudged + "): " + answer;
}

}  // namespace mf
