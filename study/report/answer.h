#pragma once
// What a comparison of modes answers, in one sentence for the top of the terminal's tables and of
// the report page (the document's `answer`), and why a run's timings cannot be judged (its
// `unjudged`):
//
//   streams finished 2.96x sooner than serial with the same 2 cores; each model trained 24.10x
//   slower than alone
//   not to be judged (serial: wall 7ms, under 0.1 s): packed finished 1.25x sooner than serial; ...
#include <string>
#include <vector>

#include "study/report/report.h"

namespace mf {

// Below this wall a run's figures are its start-up's and the noise's (a daemon's wake-up is a
// quarter of 0.1 s; runtime/machine_load.h says no busy verdict under it either).
inline constexpr double kShortestJudged_s = 0.1;

// "" where the run's timings can be judged; else why not, in words: its wall is under
// kShortestJudged_s ("wall 7ms, under 0.1 s"), or the machine was busy (its machine.busy, and
// what that cost where something quiet measured its mode: study/report/busy_cost.h).
std::string why_unjudged(const RunReport& run);

// The sentence for `runs` (several modes, maybe repeated; their medians when repeated): the mode
// with the most speedup over serial, how much sooner (or later) it finished, on how many cores
// where every run had the same budget (the cpu backend's arrangement: each mode at its best on
// them), and its models' mean slowdown against their solo runs. Repeated, it gives the speedup's
// range over the runs, and where that range holds 1.0 it says "no clear difference" instead of a
// ratio. "" where no run has a speedup (serial did not run). Prefixed with why it is not to be
// judged where its mode's or serial's runs cannot be.
//
//   streams finished 1.26x sooner than serial with the same 2 cores; each model trained 1.52x
//   slower than alone (medians of 5 runs; speedup 1.18x to 1.31x)
//   no clear difference between packed and serial with the same 2 cores (its speedup over serial
//   ranged 0.94x to 1.07x); each model trained in 0.51x its time alone (medians of 5 runs)
std::string modes_answer(const std::vector<RunReport>& runs);

}  // namespace mf
