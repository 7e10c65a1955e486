// multifit run SWEEP.json: the contention study. Trains a sweep's models in one of four modes:
// serially, on streams in one process, as processes, or packed into shared kernels (`all` runs the
// four one after another, `auto` the fastest of them in a short calibration), and measures how they
// share the machine.
//
// A run is a list of stages, read top to bottom in run_study: the plan from the command line alone
// (run_plan.h), the outputs checked, the sweep loaded, the shard taken, the journals opened
// (run_setup.h), the ranks agreed to start (run_rank.h), then Training: the modes run, the reports
// ranked and printed, the outputs written (run_messages.h, output_files.h).
#include <cstdio>
#include <filesystem>

#include "apps/multifit/commands.h"
#include "apps/multifit/mode_choice.h"
#include "apps/multifit/run_flags.h"
#include "apps/multifit/run_messages.h"
#include "apps/multifit/run_setup.h"
#include "apps/multifit/summary_table.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"
#include "study/model_worker.h"
#include "study/report/busy_cost.h"

namespace mf {
namespace {

// One run's training once it is set up: its modes run (each --repeat times, interleaved), their
// reports ranked and printed, then --save-best's models and the outputs written. The writer alone
// prints and writes; every rank trains its shares.
class Training {
 public:
  Training(RunArgs& args, const RunPlan& plan, RunRank& rank, RunSetup& setup)
      : args_(args), plan_(plan), rank_(rank), setup_(setup), options_(args.options) {}

  int run() {
    if (plan_.save_best) {  // the keeper of the run whose models are kept (not a --solo run's, nor
                            // a calibration's)
      keeper_.emplace(*plan_.save_best, args_.options.rank_by, rank_.own(kStagingFolder),
                      args_.resume && rank_.writer());
      options_.stage_best = [this](const ModelReport& m, const std::function<void()>& save) {
        keeper_->stage(m, save);
      };
    }
    if (rank_.writer())
      for (const std::string& note : no_effect_notes(args_, plan_, options_.backend.kind))
        std::fprintf(stderr, "multifit: note: %s\n", note.c_str());
    options_.timeline = true;
    const std::vector<ModeKind> modes = settle_modes();
    // from here on each model that ends ok stages its weights
    if (keeper_) keeper_->keep(setup_.jobs);
    std::vector<RunReport> runs;
    for (int repeat = 1; repeat <= args_.repeat && !(stop_ && repeat > 1); ++repeat)
      run_modes(modes, repeat, runs);
    finish(runs);
    std::fflush(stdout);
    // Rank 0's code is the run's: its models' and its outputs'. Another rank's is its own failures'
    // alone (its journal's), so that mpirun's is rank 0's unless a rank failed apart.
    return setup_.code;
  }

 private:
  // What a mode's run has already (from the journal) and where it records each model as it ends:
  // the journal, and the keeper for the run whose models are `kept`.
  StudyRecord record_of(ModeKind mode, bool kept) {
    StudyRecord record;
    if (setup_.resumed)
      if (const auto ended = setup_.resumed->ended.find(to_string(mode));
          ended != setup_.resumed->ended.end())
        record.ended = &ended->second;
    record.journal = setup_.journal.get();
    if (kept && keeper_) record.keeper = &*keeper_;
    return record;
  }

  RunReport run_one(ModeKind mode, const RunPlace& place, bool kept = false) {
    return rank_.run(mode, setup_.jobs, options_, stop_, &setup_.code, record_of(mode, kept),
                     place);
  }

  // The process started once before the in-process modes; --mode auto's choice made (the journal's
  // on
  // --resume, else a calibration).
  std::vector<ModeKind> settle_modes() {
    std::vector<ModeKind> modes = plan_.modes;
    if (args_.solo || plan_.automatic || modes.size() > 1 || modes.front() != ModeKind::processes)
      process_startup_ = start_process(options_.backend);
    if (!plan_.automatic) return modes;
    if (setup_.resumed && !setup_.resumed->auto_choice.is_null()) {
      chosen_ = setup_.resumed->auto_choice;
      const ModeKind mode = parse_named(kModeNames, chosen_.at("mode").get<std::string>(),
                                        "the journal's auto choice");
      std::fprintf(stderr,
                   "multifit: auto: %s, as the journal's run chose (no calibration on resume)\n",
                   to_string(mode));
      return {mode};
    }
    const ModeKind mode =
        choose_mode(every_mode(), setup_.jobs, options_, stop_, args_.calibration_steps, chosen_);
    if (setup_.journal) setup_.journal->auto_choice(chosen_);
    return {mode};
  }

  // One repetition: the solo runs first when asked (each model against its own serial run), then
  // each mode.
  void run_modes(const std::vector<ModeKind>& modes, int repeat, std::vector<RunReport>& runs) {
    const bool writer = rank_.writer(), quiet = options_.quiet;
    const std::string of = args_.repeat > 1 ? " (run " + std::to_string(repeat) + " of " +
                                                  std::to_string(args_.repeat) + ")"
                                            : "";
    RunPlace place{repeat, chosen_, setup_.sweep, args_.shard, process_startup_};
    std::optional<RunReport> serial;
    if (args_.solo && modes.front() != ModeKind::serial) {
      if (writer && !quiet)
        std::fprintf(stderr, "multifit: solo runs%s: each model alone, for its slowdown\n",
                     of.c_str());
      serial = run_one(ModeKind::serial, place);
    }
    for (const ModeKind mode : modes) {
      if (writer && (modes.size() > 1 || args_.repeat > 1) && !quiet)
        std::fprintf(stderr, "multifit: mode %s%s\n", to_string(mode), of.c_str());
      place.serial = serial ? &*serial : nullptr;
      RunReport run = run_one(mode, place, true);
      if (!writer) continue;  // rank 0 has the run's report
      if (mode == ModeKind::serial) serial = run;
      runs.push_back(std::move(run));
      note_busy_costs(runs);  // against the quiet runs so far; finish's again against them all
      if (repeat == 1)
        print_run_table(runs.back(), runs.size() == 1);
      else
        print_run_line(runs.back());
    }
  }

  // The journal's failure said; the writer's tables, errors, --save-best's models and outputs.
  void finish(std::vector<RunReport>& runs) {
    int& code = setup_.code;
    if (setup_.journal && !setup_.journal->error().empty()) {
      std::fprintf(
          stderr,
          "multifit: error: %s; the models that ended after it are not in it (--resume would train them again)\n",
          setup_.journal->error().c_str());
      code = worse_exit_code(code, kExitFailure);
    }
    if (!rank_.writer()) return;
    note_busy_costs(runs);
    if (args_.repeat > 1)
      print_repeats_table(runs);
    else if (runs.size() > 1)
      print_modes_table(runs);
    print_errors(runs);
    if (code == kExitInterrupted) print_resume_note(runs, setup_.journal ? plan_.journal : "");
    if (keeper_ && (stop_ || code == kExitInterrupted))  // here or on a rank: --resume finishes the
                                                         // run, and takes the staged weights on
      std::fprintf(
          stderr,
          "multifit: note: --save-best: the run was interrupted, so its best are not chosen yet; the weights it staged stay in %s for --resume\n",
          keeper_->staging().c_str());
    else if (keeper_) {
      const auto staging = rank_.every_ranks(
          (std::filesystem::path(plan_.save_best->dir) / kStagingFolder).string());
      code = worse_exit_code(
          code, save_best_models(*keeper_, staging, runs.back(), setup_.jobs, args_.resume));
    }
    code = write_output_files(runs, args_.files, code);
  }

  RunArgs& args_;
  const RunPlan& plan_;
  RunRank& rank_;
  RunSetup& setup_;
  RunOptions options_;  // this run's: its stage_best holds the keeper, which ends with it
  std::optional<BestKeeper> keeper_;
  const std::atomic<bool>& stop_ = stop_on_interrupt();
  std::optional<double> process_startup_;
  nlohmann::json chosen_;  // --mode auto: the calibration and its choice
};

// The stages of a run. Under mpirun every rank runs them (study/ranks/run_over_ranks.h): each reads
// the sweep, journals its own models and trains its shares; rank 0 alone (the writer) reads a
// journal to resume, prints, and writes the outputs. The ranks agree before any of them trains: a
// rank that cannot start stops them all.
int run_study(RunArgs& args) {
  RunRank rank;
  RunPlan plan;
  RunSetup setup;
  std::string cannot_start;  // under mpirun: why this rank cannot start
  try {
    plan = plan_run(args, rank.under_mpi());
    check_outputs(args, plan, rank);
    load_jobs(args, plan, rank, setup);
    take_shard(args, rank, setup);
    open_writers_journal(args, plan, rank, setup);
  } catch (const std::exception& e) {
    if (!rank.under_mpi()) throw;
    cannot_start = *e.what() ? e.what() : "an unnamed failure";
  }
  if (rank.under_mpi()) {
    if (const std::string agreed = rank.agree_to_start(cannot_start, what_is_run(args, setup));
        !agreed.empty()) {
      // rank 0 says why, and its exit code is the job's (runtime/mpi_world.h)
      if (!rank.writer()) return kExitOk;
      write_unstarted(args, agreed);
      throw UserError(agreed);
    }
    open_ranks_journal(plan, rank, setup);
  }
  try {
    return Training(args, plan, rank, setup).run();
  } catch (const std::exception& e) {
    // under mpirun the others would wait on this rank for ever: the job ends
    rank.abort_job_after(e);
    throw;
  }
}

}  // namespace

Command add_run_command(CLI::App& app, const RunHooks& hooks) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = add_run_flags(app, *args);
  return [args, run, hooks] {
    read_given_flags(*run, *args);
    args->options.judge = hooks.judge, args->options.status = hooks.status;
    return run_study(*args);
  };
}

}  // namespace mf
