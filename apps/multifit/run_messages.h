#pragma once
// What `multifit run` says on stderr once its modes have run: the models' errors, how to finish an
// interrupted run, and where --save-best put the best models.
#include <string>
#include <vector>

#include "study/best/publish.h"
#include "study/best/staging.h"
#include "study/report/report.h"

namespace mf {

// Every model that failed, one line per error: an error that several models share word for word (no
// usable GPU, the run interrupted before they started) is one line that counts them and names the
// first, however large the sweep; an error alike in every mode is said once.
void print_errors(const std::vector<RunReport>& runs);

// After Ctrl-C: how many models did not finish, and that --resume trains them (with a journal at
// `journal`), or how to have one next time (`journal` "").
void print_resume_note(const std::vector<RunReport>& runs, const std::string& journal);

// --save-best's end: the best K of `run`'s ranking moved into DIR from `staging` (every rank's
// staging folder; finish_best) and said in a line. Returns the exit code it adds: 2 when models
// ended ok but none has the metric, 1 when a file could not be written or a best model's weights
// were not kept (`resumed`: the run finishes one that --resume took up).
int save_best_models(const BestKeeper& keeper, const std::vector<std::string>& staging,
                     const RunReport& run, const std::vector<Job>& jobs, bool resumed);

}  // namespace mf
