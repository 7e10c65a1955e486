#include "apps/multifit/run_setup.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "apps/multifit/run_checks.h"
#include "runtime/error.h"
#include "runtime/output_path.h"
#include "study/best/staging.h"
#include "study/model_worker.h"
#include "study/modes/processes/worker_mps.h"
#include "study/ranks/journals.h"
#include "study/sweep/shard.h"
#include "runtime/names.h"

namespace mf {
namespace {

// Opens a journal (read first on --resume), saying where an earlier one was kept (unless quiet);
// one that cannot be opened is said, and the run goes on without it.
std::unique_ptr<Journal> open_journal(const std::string& path, const JournalRun& run,
                                      const JournalContents* resumed, bool quiet, int* code) {
  if (path.empty()) return nullptr;
  try {
    auto journal = std::make_unique<Journal>(path, run, resumed);
    if (!journal->previous().empty() && !quiet)
      std::fprintf(
          stderr,
          "multifit: note: the earlier journal at %s is kept as %s (--resume finishes a run instead)\n",
          path.c_str(), journal->previous().c_str());
    return journal;
  } catch (const SystemError& e) {
    std::fprintf(stderr, "multifit: error: %s; the run goes on without a journal\n", e.what());
    *code = worse_exit_code(*code, kExitFailure);
    return nullptr;
  }
}

// The backend --backend names, auto resolved, and its options checked before any work (every model
// would fail).
void resolve_backend(BackendOptions& backend) {
  const bool automatic = backend.kind == BackendKind::automatic;
  backend = resolve_auto(backend, std::cerr);
  try {
    if (backend.kind == BackendKind::cpu) check_cpu_options(backend);
  } catch (const UserError& e) {
    if (!automatic) throw;
    throw UserError(std::string(e.what()) + " (--backend auto chose cpu: no usable CUDA device)");
  }
}

// --resume: the journals' models said, by mode and journal ("2 in serial mode in OUT.journal, 4 in
// serial mode in the other ranks' journals").
void say_resumed(const std::string& journal, const JournalContents& resumed,
                 const EndedModels& ranks_ended) {
  size_t models = 0;
  std::vector<std::string> counts;
  const auto count = [&](const EndedModels& ended_by_mode, const std::string& in) {
    for (const auto& [mode, ended] : ended_by_mode) {
      models += ended.size();
      counts.push_back(std::to_string(ended.size()) + " in " + mode + " mode in " + in);
    }
  };
  count(resumed.ended, journal);
  count(ranks_ended, "the other ranks' journals");
  const std::string where = joined(counts);
  if (models == 0)
    std::fprintf(stderr, "multifit: resume: no model ended before (%zu model lines in %s)\n",
                 resumed.lines, journal.c_str());
  else
    std::fprintf(stderr, "multifit: resume: %zu model%s ended before (%s); %s not trained again\n",
                 models, models == 1 ? "" : "s", where.c_str(), models == 1 ? "it is" : "they are");
}

// A judge given in the process (RunOptions::judge) rules on each trial as it trains here, once: a
// UserError for what would train a trial elsewhere or twice, or judge it twice.
void check_judge_fits(const RunArgs& args, const RunPlan& plan, const RunRank& rank,
                      bool scheduler) {
  const char* other = scheduler                              ? "a sweep's scheduler"
                      : plan.all || plan.automatic           ? "--mode all or auto"
                      : plan.modes[0] == ModeKind::processes ? "--mode processes"
                      : rank.under_mpi()                     ? "mpirun"
                      : args.shard                           ? "--shard"
                      : args.resume                          ? "--resume"
                      : args.solo                            ? "--solo"
                      : args.repeat > 1                      ? "--repeat"
                                                             : nullptr;
  if (other)
    throw UserError(
        args.options.models_path +
        ": a judge given in this process (an Optuna pruner) rules on each trial as it trains here, once, so it takes no " +
        other + "; run the sweep in serial, streams or packed mode, once");
}

}  // namespace

void check_outputs(const RunArgs& args, const RunPlan& plan, const RunRank& rank) {
  if (rank.writer()) {
    const std::string best_index =
        plan.save_best ? (std::filesystem::path(plan.save_best->dir) / kBestIndex).string() : "";
    std::vector<NamedFile> others = {{"--journal", plan.journal},
                                     {"--save-best's index", best_index}};
    if (!plan.journal.empty())
      for (const std::string& journal : rank.every_ranks(plan.journal))
        if (journal != plan.journal) others.push_back({"a rank's journal", journal});
    prepare_output_files(args.files, {{"the sweep", args.options.models_path}}, others);
    if (!args.resume)
      check_output_path(args.journal.empty() ? "--journal (beside --json)" : "--journal",
                        plan.journal, false);  // read back by --resume: a file
  }
  if (plan.save_best) check_save_best_dir(*plan.save_best);
}

void load_jobs(RunArgs& args, const RunPlan& plan, const RunRank& rank, RunSetup& setup) {
  RunOptions& options = args.options;
  try {
    const Sweep sweep = load_sweep(options.models_path);
    resolve_backend(options.backend);
    check_backend_flags(args, options.backend.kind);
    rank.fit_options(options, args.threads_given);
    setup.jobs = make_jobs(sweep, options);
    const bool processes = plan.all || plan.automatic || plan.modes[0] == ModeKind::processes;
    if (options.backend.kind == BackendKind::cuda && processes)
      check_share_has_mps(options, setup.jobs);  // before any model, with the document written
    if (options.judge) check_judge_fits(args, plan, rank, sweep.scheduler.has_value());
    if (sweep.scheduler) {
      // A trial's verdict waits for those before it in the sweep (study/sweep/rungs.h): one table
      // must see them all.
      if (rank.under_mpi() || args.shard)
        throw UserError(
            options.models_path + ": scheduler: not available " +
            (rank.under_mpi() ? std::string("under mpirun") : "with --shard") +
            " yet: each part would judge its trials against its own only, and decide otherwise than one run; run the sweep in one process (any --mode)");
      options.scheduler = scheduler_for(*sweep.scheduler, setup.jobs);
    }
    if (!options.inject_fault.empty())
      check_fault_target(setup.jobs, options.inject_fault, options.models_path);
    if (plan.save_best) check_save_best_metric(setup.jobs, options.rank_by);
    setup.sweep = identify_sweep(sweep, setup.jobs);  // the whole sweep's, whatever part runs
  } catch (const UserError& e) {  // the document is written whatever failed: here, with no model
    if (rank.writer()) write_unstarted(args, e.what());
    throw;
  }
}

void take_shard(const RunArgs& args, const RunRank& rank, RunSetup& setup) {
  const RunOptions& options = args.options;
  std::vector<Job>& jobs = setup.jobs;
  if (args.shard) {  // each job keeps its index, its place in the sweep
    jobs = shard_jobs(jobs, *args.shard);
    spread_over_devices(jobs, options.devices);  // over this run's models, not the sweep's places
    if (rank.writer() && jobs.empty())
      std::fprintf(
          stderr,
          "multifit: note: shard %s has no models: the sweep has %zu; its document has none\n",
          to_string(*args.shard).c_str(), setup.sweep.models);
    else if (rank.writer() && !options.quiet) {
      std::string places;
      for (size_t i = 0; i < jobs.size() && i < 3; ++i)
        places += (i ? ", #" : "#") + std::to_string(jobs[i].index);
      std::fprintf(stderr, "multifit: shard %s: %zu of the sweep's %zu models: %s%s (one in %zu)\n",
                   to_string(*args.shard).c_str(), jobs.size(), setup.sweep.models, places.c_str(),
                   jobs.size() > 3 ? ", ..." : "", args.shard->count);
    }
  }
  if (rank.writer() && args.shard && !options.inject_fault.empty() &&
      std::none_of(jobs.begin(), jobs.end(),
                   [&](const Job& j) { return j.name == options.inject_fault; }))
    std::fprintf(
        stderr,
        "multifit: note: --inject-fault %s: that model is in another shard than %s, so nothing faults here\n",
        options.inject_fault.c_str(), to_string(*args.shard).c_str());
  setup.journal_run = {to_string(options.backend.kind),
                       args.mode,
                       args.solo,
                       setup.sweep,
                       args.shard,
                       options.scheduler};
}

void open_writers_journal(const RunArgs& args, const RunPlan& plan, const RunRank& rank,
                          RunSetup& setup) {
  if (!rank.writer()) return;
  // --resume: what the journals of an earlier run's other ranks recorded (mpirun)
  EndedModels ranks_ended;
  if (args.resume) {
    setup.resumed =
        read_with_rank_journals(plan.journal, setup.jobs, setup.journal_run, &ranks_ended);
    say_resumed(plan.journal, *setup.resumed, ranks_ended);
  }
  setup.journal =
      open_journal(plan.journal, setup.journal_run, setup.resumed ? &*setup.resumed : nullptr,
                   args.options.quiet, &setup.code);
  // This journal takes in what an earlier run's other ranks recorded, before this run's start
  // theirs afresh.
  for (const auto& [mode, ended] : ranks_ended)
    for (const auto& [index, model] : ended) {
      if (setup.journal)
        setup.journal->ended(mode, *job_at(setup.jobs, index), model.report, model.exit_code);
      setup.resumed->ended[mode][index] = model;
    }
  // The earlier ranks' journals are set aside once this one holds what they recorded.
  if (!plan.journal.empty() && (setup.journal || !args.resume))
    set_aside_rank_journals(plan.journal, rank.size());
  // before the other ranks make their keepers
  if (plan.save_best) gather_staging(*plan.save_best, args.resume);
}

void open_ranks_journal(const RunPlan& plan, const RunRank& rank, RunSetup& setup) {
  if (rank.writer() || plan.journal.empty()) return;
  setup.journal =
      open_journal(rank.own(plan.journal), setup.journal_run, nullptr, true, &setup.code);
}

nlohmann::json what_is_run(const RunArgs& args, const RunSetup& setup) {
  const JournalRun& run = setup.journal_run;
  return {{"sweep", setup.sweep},
          {"backend", run.backend},
          {"mode", run.mode},
          {"solo", run.solo},
          {"shard", args.shard ? to_string(*args.shard) : ""},
          {"save_best", args.save_best_given ? nlohmann::json(args.save_best) : nlohmann::json()}};
}

void write_unstarted(const RunArgs& args, const std::string& error) {
  RunReport unstarted;
  unstarted.mode = args.mode;
  unstarted.error = error;
  unstarted.shard = args.shard;
  // the document alone: no model for a row
  write_output_files({unstarted}, {args.files.json, "", ""}, kExitMistake);
}

}  // namespace mf
