#pragma once
// What a run prints when it ends: a table of its models (for more than kFullTableModels, the counts
// by status, the best and worst few by the run's ranking and the spread of each figure: the full
// table is in the CSV and the document), and for several modes of one sweep the modes side by side.
#include <vector>

#include "study/report/report.h"

namespace mf {

// "name: test_loss 0.3512 - test_accuracy 0.8731 - 3 epochs in 4.21s - pool peak 1.20 MiB", or its
// status.
void print_model_line(const ModelReport& m);
inline constexpr size_t kFullTableModels = 24;
inline constexpr size_t kRankedShown = 5;  // the best and the worst shown of a large run
// The run's table; ranked by run.rank_by when it is set (study/report/ranking.h); with `legend`,
// what its columns mean under it (a command's first table).
void print_run_table(const RunReport& run, bool legend);
// The run's line of figures alone (a repeated run after its first).
void print_run_line(const RunReport& run);
// A scheduler's rungs (survivors and the metric's spread at each) and the compute it spent.
void print_scheduler(const SchedulerReport& scheduler);
// The table alone, without the run's line of figures (a merge's are its parts'): a row per model,
// or for a large run its counts, best, worst and spreads.
void print_models_table(const RunReport& run, bool legend);
void print_modes_table(const std::vector<RunReport>& runs);
// --repeat: each mode's runs side by side, every figure's median, least and most
// (study/report/repeats.h).
void print_repeats_table(const std::vector<RunReport>& runs);

}  // namespace mf
