#pragma once
// One mode's run of a study (`multifit run`): in this process (run_mode) or over the ranks of an
// MPI job (run_over_ranks), each model recorded in the journal and the keeper as it ends, and its
// report finished for the study's document. The command line prints and writes what it returns.
#include <atomic>
#include <map>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/mpi_world.h"
#include "study/best/staging.h"
#include "study/job.h"
#include "study/report/report.h"
#include "study/runner.h"
#include "study/sweep/journal.h"

namespace mf {

// What a mode's run has already and where its models are recorded as they end, one at a time.
struct StudyRecord {
  // Models that ended in an earlier run of this mode (a resumed run's journal), by job index: not
  // trained again, their reports taken as they are
  const std::map<size_t, EndedModel>* ended = nullptr;
  Journal* journal = nullptr;    // this process's; null: none (each model under its mode's name)
  BestKeeper* keeper = nullptr;  // --save-best's, for the run whose models are kept; null: none
};

// Where a mode's run stands in its study, which its report states (study/report/report.h's fields
// of the same names).
struct RunPlace {
  int repeat = 1;              // --repeat: which run of its mode this is, from 1
  nlohmann::json auto_choice;  // --mode auto's calibration and choice; null otherwise
  std::optional<SweepIdentity> sweep;
  std::optional<Shard> shard;
  // The process's one-time start-up, made before the first in-process mode (not processes mode's)
  std::optional<double> process_startup_s;
  // The run each model is compared with alone (--solo's, or the study's serial run); null: none,
  // unless the run is serial, which is its own
  const RunReport* serial = nullptr;
};

// Runs `jobs` in `mode`, in this process or over `world`'s ranks (null: alone), and returns the
// finished report: `place`'s fields, the models' slowdowns against their serial runs, the ranking
// by options.rank_by. The keeper is first offered the ended models (BestKeeper::resumed). Under
// mpirun rank 0 gets the whole run's report, the others one with no models, unfinished.
// *exit_code takes the worst of this process's models' codes. Throws what run_mode throws.
RunReport run_in_study(ModeKind mode, const std::vector<Job>& jobs, const RunOptions& options,
                       const std::atomic<bool>& stop, int* exit_code, const StudyRecord& study,
                       const RunPlace& place, MpiWorld* world);

}  // namespace mf
