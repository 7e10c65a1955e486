#pragma once
// --save-best's end: the best K of the final ranking moved from the staging folders into DIR, each
// beside its spec, and their index, DIR/best.json. A run over several processes finishes from all
// their staging folders: the best K of the whole run are each among their process's best K, so
// among the union.
#include <cstddef>
#include <string>
#include <vector>

#include "study/best/names.h"
#include "study/job.h"
#include "study/report/report.h"

namespace mf {

// One model of the best K as finish_best() left it.
struct BestModel {
  size_t rank = 0;  // 1 for the best
  std::string name;
  std::string weights;  // its weights file in DIR; "" when no staging folder had it
};

// Finishes --save-best for a run that `ranked` reports, ranked by rank_run over all its models (a
// run over several processes: every process's): the first K of ranked.ranking, each found in one of
// `staging` (each process's staging folder), are moved into DIR as STEM.weights beside
// STEM.spec.json (its job's spec, overrides applied, with the data it trained on: what
// `train --load` needs), and DIR/best.json lists them (rank, name, the metric's value, the files,
// the settings). Files an earlier best.json in DIR listed and this one does not are removed; the
// staging folders are removed. `jobs` are the sweep's (make_jobs), by index. Returns the models in
// rank order; a model whose file no staging folder had is listed with no weights (the caller says
// so). Throws SystemError when a file cannot be moved or written.
std::vector<BestModel> finish_best(const SaveBest& save, const RunReport& ranked,
                                   const std::vector<Job>& jobs,
                                   const std::vector<std::string>& staging);

}  // namespace mf
