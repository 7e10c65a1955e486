#include "study/ranks/mode_run.h"

#include "study/ranks/run_over_ranks.h"
#include "study/report/ranking.h"
#include "study/sweep/shard.h"

namespace mf {

RunReport run_in_study(ModeKind mode, const std::vector<Job>& jobs, const RunOptions& options,
                       const std::atomic<bool>& stop, int* exit_code, const StudyRecord& study,
                       const RunPlace& place, MpiWorld* world) {
  RunRecord record;
  record.ended = study.ended;
  if (study.keeper && study.ended)
    for (const auto& [index, ended] : *study.ended) study.keeper->resumed(ended.report);
  if (study.journal || study.keeper)
    record.on_ended = [&](size_t index, const ModelReport& report, int exit_code) {
      if (study.journal)  // jobs may be a part of the sweep: the model is found by its place
        study.journal->ended(to_string(mode), *job_at(jobs, index), report, exit_code);
      if (study.keeper) study.keeper->ended(report);
    };
  RunReport run = world
                      ? run_over_ranks(mode, jobs, options, stop, exit_code, record, *world)
                      : run_mode(*make_mode(mode, options), jobs, options, stop, exit_code, record);
  if (world && world->rank() != 0) return run;  // rank 0 has the run's report
  if (mode != ModeKind::processes) run.process_startup_s = place.process_startup_s;
  run.repeat = place.repeat;
  run.auto_choice = place.auto_choice;
  run.sweep = place.sweep;
  run.shard = place.shard;
  if (mode == ModeKind::serial) {
    const RunReport alone = run;  // its own serial run: every slowdown 1, its speedup 1
    compare_with_serial(run, alone);
  } else if (place.serial) {
    compare_with_serial(run, *place.serial);
  }
  rank_run(run, options.rank_by);
  return run;
}

}  // namespace mf
