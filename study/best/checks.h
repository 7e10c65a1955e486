#pragma once
// --save-best's checks before anything trains, so that a wrong DIR or a metric no model can have is
// one line at the start rather than a failure at the end.
#include <optional>
#include <vector>

#include "study/best/names.h"
#include "study/job.h"
#include "study/report/ranking.h"

namespace mf {

// DIR is a folder that exists and is writable, or can be made in a folder that exists and is.
// Throws UserError naming --save-best, the value and what is allowed.
void check_save_best_dir(const SaveBest& save);
// When `by` is given, some model of the sweep can have a value of it (validation rows for val_*,
// an accuracy metric for *_accuracy, a data source with a test set for test_*). Throws UserError
// naming --save-best, the metric and what it needs.
void check_save_best_metric(const std::vector<Job>& jobs, std::optional<RankBy> by);

}  // namespace mf
