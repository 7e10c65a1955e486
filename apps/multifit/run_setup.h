#pragma once
// The stages of `multifit run` before anything trains, in the order they run: the outputs checked,
// the sweep loaded into jobs, this run's --shard of them taken, and the journals read (--resume)
// and opened. Each says what it finds on stderr; a stage's UserError is the run's one-line error.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/multifit/run_args.h"
#include "apps/multifit/run_plan.h"
#include "apps/multifit/run_rank.h"
#include "study/sweep/journal.h"

namespace mf {

// What a run has before it trains.
struct RunSetup {
  // the sweep's, or its --shard's (each keeps its index, its place in the sweep)
  std::vector<Job> jobs;
  SweepIdentity sweep;     // the whole sweep's, for the document
  JournalRun journal_run;  // what the journals are of
  // --resume: what the run's journals recorded (the writer's)
  std::optional<JournalContents> resumed;
  std::unique_ptr<Journal> journal;  // this rank's; none without --journal or --json
  int code = 0;                      // the exit code so far
};

// The writer's outputs (--json, --csv, --trace, the journals, --save-best's index) can be written
// and overwrite no input, and --save-best's folder can be made. Throws UserError.
void check_outputs(const RunArgs& args, const RunPlan& plan, const RunRank& rank);
// The sweep loaded and its jobs made, with the backend resolved and fitted to this rank; a mistake
// in the sweep is a UserError, after the writer wrote the document that says it (with no model).
void load_jobs(RunArgs& args, const RunPlan& plan, const RunRank& rank, RunSetup& setup);
// --shard: this run's part of the jobs, said on stderr.
void take_shard(const RunArgs& args, const RunRank& rank, RunSetup& setup);
// The writer's journal: on --resume the run's journals read (every rank's) and what they hold said;
// then opened, taking in what the other ranks' journals held, which are set aside; --save-best's
// staging folders gathered. Throws UserError for a journal that does not fit the run.
void open_writers_journal(const RunArgs& args, const RunPlan& plan, const RunRank& rank,
                          RunSetup& setup);
// Another rank's own journal, once the ranks agreed to start (a rank's journal starts afresh).
void open_ranks_journal(const RunPlan& plan, const RunRank& rank, RunSetup& setup);

// What the ranks must agree they are to run (RunRank::agree_to_start).
nlohmann::json what_is_run(const RunArgs& args, const RunSetup& setup);
// The result document of a run that could not start: its error and no model (the writer's).
void write_unstarted(const RunArgs& args, const std::string& error);

}  // namespace mf
