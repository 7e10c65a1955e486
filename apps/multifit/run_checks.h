#pragma once
// `multifit run`'s checks of its flags against the sweep before anything trains, so that a wrong
// --save-best DIR, a metric no model can have or an --inject-fault that names no model is one line
// at the start rather than a failure at the end (or a run without the fault asked for). The rules
// among the flags alone are run_plan.h's.
#include <optional>
#include <string>
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
// --inject-fault NAME names a model of `jobs` (the sweep at `sweep_path`). Throws UserError naming
// the first few models.
void check_fault_target(const std::vector<Job>& jobs, const std::string& name,
                        const std::string& sweep_path);

}  // namespace mf
