#pragma once
// What a busy machine cost a run: the samples/s it reached while training against what its mode
// reached on a quiet machine in the same invocation. The quiet figure is the median of the mode's
// runs whose timings can be judged (--repeat interleaves them, so a load that comes and goes leaves
// some), else --mode auto's calibration of that mode where its timings can be. A machine busy
// throughout has no quiet figure, and the run says only that it was busy.
#include <vector>

#include "study/report/report.h"

namespace mf {

// Sets machine.quiet_samples_per_s and quiet_from of each busy run in `runs` that has a quiet
// reference among them (or in its auto_choice's calibration); clears them elsewhere.
void note_busy_costs(std::vector<RunReport>& runs);

// "; it trained at 0.47x the samples/s of its mode quiet (4210344 against 8920511, run 2)" for a
// busy run with a quiet reference, "" otherwise.
std::string busy_cost_words(const RunReport& run);

}  // namespace mf
