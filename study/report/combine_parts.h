#pragma once
// The report of a run made in parts, assembled from its parts' figures and its models' reports: the
// ranks of an MPI run (study/ranks/run_over_ranks.h), or the parts of a sweep run apart and merged
// (study/sweep/merge.h: shards' documents, journals). Each whole-run figure's rule, sum or max and
// why, is written once, in combine_parts. A run of one process is measured whole instead
// (study/runner.h's run_mode), and so is described by the same describe_models.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "study/report/report.h"

namespace mf {

// How a run's parts ran, which decides how some of their figures add up.
enum class PartsRan {
  together,  // an MPI run's ranks: started at once, training side by side until the last one ends
  apart,     // a sweep's parts merged: each on its own, maybe on another machine, maybe one after
             // another
};

// One part as it goes into the whole run: its line under the run's `ranks` or `shards`, and what
// its own run measured. A journal's part measured nothing of its run: its figures absent, 0 or "".
struct PartFigures {
  RunPart line;
  // Its training: from its start barriers to its phases' ends, summed over its runs (a rank's
  // shares each had one), and the rows its models trained on in that time; absent and 0 where none
  // trained.
  std::optional<double> train_s;
  int64_t samples = 0;
  int concurrency = 0;             // the most models it trained at once
  std::string concurrency_reason;  // why that many
  // in-process modes: the most host threads that trained them at once
  std::optional<int> training_threads;
  size_t host_peak_rss_bytes = 0;                // its process's peak resident host memory (VmHWM)
  std::optional<size_t> workers_peak_rss_bytes;  // processes mode: the sum of its workers' peaks
  int resumed_models = 0;  // taken as they ended in its journal, not trained again
};

// The run of `parts` and of `models` (every part's models, in sweep order): the models, described
// (describe_models), each part's line under `ranks` (together) or `shards` (apart), and the
// run's figures from the parts'. What else the run is (its mode, sweep, ranking, gpu_note) is the
// caller's to say.
RunReport combine_parts(PartsRan how, const std::vector<PartFigures>& parts,
                        std::vector<ModelReport> models);

// The run's backend (its first model's that reached one), its devices and their schedules, its
// data sets ("; "-joined, each once, in the models' order) and their bytes (one copy per process
// and data set), from its models' reports.
void describe_models(RunReport& run);

}  // namespace mf
