// multifit run SWEEP.json: the contention study. Trains a sweep's models in one of four modes:
// serially, on streams in one process, as processes, or packed into shared kernels (`all` runs the
// four one after another, `auto` the fastest of them in a short calibration), and measures how they
// share the machine.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "apps/multifit/cli_values.h"
#include "apps/multifit/commands.h"
#include "apps/multifit/output_files.h"
#include "apps/multifit/summary_table.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/device.h"
#include "runtime/interrupt.h"
#include "runtime/machine_resources.h"
#include "runtime/mpi_world.h"
#include "runtime/output_file.h"
#include "runtime/output_path.h"
#include "study/best_keeper.h"
#include "study/journal.h"
#include "study/rank_journals.h"
#include "study/ranks.h"
#include "study/report/ranking.h"
#include "study/model_worker.h"
#include "study/runner.h"
#include "study/shard.h"

namespace mf {
namespace {

struct RunArgs {
  RunOptions options;
  OutputFiles files;
  std::string mode = "serial";
  bool solo = false;
  int64_t calibration_steps = 100;  // --mode auto: training steps per model in each mode's calibration
  std::string journal;  // --journal; empty: OUT.journal beside --json OUT
  std::optional<Shard> shard;     // --shard I/N; absent: the whole sweep
  std::pair<int, std::string> save_best;  // --save-best K DIR
  bool resume = false;
  int repeat = 1;  // --repeat: every mode's run this many times, interleaved
  bool calibration_steps_given = false, pack_size_given = false, save_best_given = false, threads_given = false;
};

// Every model that failed on stderr, one line per error: an error that several models share
// word for word (no usable GPU, the run interrupted before they started) is one line that counts
// them and names the first, however large the sweep; an error alike in every mode is said once.
void print_errors(const std::vector<RunReport>& runs) {
  std::vector<std::string> errors;                         // in the order first met
  std::map<std::string, std::vector<std::string>> models;  // by error, each model once
  for (const RunReport& run : runs)
    for (const ModelReport& m : run.models) {
      if (m.status == ModelStatus::ok || m.status == ModelStatus::stopped) continue;  // a trial that lost is no error
      std::vector<std::string>& names = models[m.error];
      if (names.empty()) errors.push_back(m.error);
      if (std::find(names.begin(), names.end(), m.name) == names.end()) names.push_back(m.name);
    }
  for (const std::string& error : errors) {
    const std::vector<std::string>& names = models[error];
    const std::string& first = names.front();
    const bool named = error.starts_with(first + ":") || error.starts_with("model '" + first + "'");
    const std::string who = names.size() > 1 ? std::to_string(names.size()) + " models (" + first + " and others): "
                            : named          ? ""
                                             : first + ": ";
    std::fprintf(stderr, "multifit: error: %s%s\n", who.c_str(), error.c_str());
  }
}

// After Ctrl-C: how many models did not finish, and that --resume trains them (with a journal), or
// how to have one next time.
void print_resume_note(const std::vector<RunReport>& runs, const std::string& journal) {
  std::set<std::string> unfinished;
  for (const RunReport& run : runs)
    for (const ModelReport& m : run.models)
      if (m.status == ModelStatus::failed && (m.error.starts_with(kNotStarted) || m.error.starts_with(kInterrupted)))
        unfinished.insert(m.name);
  if (unfinished.empty()) return;
  const std::string n = std::to_string(unfinished.size()) + (unfinished.size() == 1 ? " model" : " models");
  if (!journal.empty())
    std::fprintf(stderr, "multifit: note: the run was interrupted with %s unfinished: the same command with --resume "
                         "trains them, keeping what %s recorded\n", n.c_str(), journal.c_str());
  else
    std::fprintf(stderr, "multifit: note: the run was interrupted with %s unfinished; it kept no journal to resume "
                         "from: a run with --json OUT (or --journal PATH) keeps one\n", n.c_str());
}

// --mode: one of the modes, all (the four in turn) or auto (the fastest in a calibration).
std::vector<std::string> mode_choices() {
  std::vector<std::string> names;
  for (const Named<ModeKind>& mode : kModeNames) names.push_back(mode.name);
  names.insert(names.end(), {"all", "auto"});
  return names;
}

// Runs the calibration of --mode auto, says what each mode measured and which it picks and why.
ModeKind choose_mode(const std::vector<ModeKind>& modes, const std::vector<Job>& jobs,
                     const RunOptions& options, const std::atomic<bool>& stop, const RunArgs& args,
                     nlohmann::json& record) {
  const Clock::time_point start = Clock::now();
  const std::vector<Calibration> calibrations = calibrate(modes, jobs, options, stop, args.calibration_steps);
  const double calibration_s = seconds_since(start);
  nlohmann::json measured = nlohmann::json::array();
  for (const Calibration& c : calibrations) {
    measured.push_back({{"mode", to_string(c.mode)}, {"startup_s", c.startup_s}, {"samples_per_s", c.samples_per_s},
                        {"predicted_wall_s", c.predicted_wall_s}});
    if (!options.quiet)
      std::fprintf(stderr, "multifit: auto: %-9s start-up %s, %.0f samples/s while training: the sweep in about %s\n",
                   to_string(c.mode), format_duration(c.startup_s.value_or(0)).c_str(), c.samples_per_s.value_or(0),
                   c.predicted_wall_s ? format_duration(*c.predicted_wall_s).c_str() : "(nothing trained)");
  }
  // The choice is said even when quiet: it is what the run's figures are of.
  const bool measured_any = calibrations.front().predicted_wall_s.has_value();
  const ModeKind mode = measured_any ? calibrations.front().mode : ModeKind::serial;
  if (measured_any)
    std::fprintf(stderr, "multifit: auto: %s, the fastest in a calibration of at most %lld steps per model (%s)\n",
                 to_string(mode), (long long)args.calibration_steps, format_duration(calibration_s).c_str());
  else
    std::fprintf(stderr, "multifit: auto: serial: no model trained in the calibration (%s), so nothing tells the modes apart\n",
                 format_duration(calibration_s).c_str());
  record = {{"mode", to_string(mode)}, {"calibration_steps", args.calibration_steps}, {"calibration_s", calibration_s},
            {"calibration", measured}};
  return mode;
}

// The process's one-time start-up: the backend's libraries loaded, on a GPU the CUDA context made.
// Done once before the in-process modes, so that the first of them (serial) does not pay for the
// others; a failure is left for each model to report. Returns its seconds.
double start_process(const BackendOptions& backend) {
  const Clock::time_point start = Clock::now();
  try {
    make_backend(backend, std::cerr);
  } catch (const std::exception&) {
  }
  return seconds_since(start);
}

// The journal's path: --journal, or OUT.journal beside --json OUT; none without either.
std::string journal_path(const RunArgs& args) {
  if (!args.journal.empty()) return args.journal;
  if (args.repeat > 1) return "";  // a journal holds one run of each mode
  if (args.files.json.empty() || args.files.json == "-") return "";
  return args.files.json + ".journal";
}

// Opens the journal (read first with --resume), saying where an earlier one was kept (unless quiet);
// a journal that cannot be opened is said, and the run goes on without one.
std::unique_ptr<Journal> open_journal(const std::string& path, const JournalRun& run, const JournalContents* resumed,
                                      bool quiet, int* code) {
  if (path.empty()) return nullptr;
  try {
    auto journal = std::make_unique<Journal>(path, run, resumed);
    if (!journal->previous().empty() && !quiet)
      std::fprintf(stderr, "multifit: note: the earlier journal at %s is kept as %s (--resume finishes a run instead)\n",
                   path.c_str(), journal->previous().c_str());
    return journal;
  } catch (const SystemError& e) {
    std::fprintf(stderr, "multifit: error: %s; the run goes on without a journal\n", e.what());
    *code = worse_exit_code(*code, kExitFailure);
    return nullptr;
  }
}

// --save-best's end: the best K of the run's ranking moved into DIR from the staging folders (every
// rank's under mpirun; finish_best) and said in a line.
// Returns the exit code it adds: 2 when models ended ok but none has the metric, 1 when a file could
// not be written or a best model's weights were not kept.
int save_best_models(const BestKeeper& keeper, const std::vector<std::string>& staging, const RunReport& run,
                     const std::vector<Job>& jobs, bool resumed) {
  const SaveBest& save = keeper.save();
  const std::string named = "--save-best " + std::to_string(save.k) + " " + save.dir;
  std::vector<BestModel> best;
  try {
    best = finish_best(save, run, jobs, staging);
  } catch (const SystemError& e) {
    std::fprintf(stderr, "multifit: error: %s: %s\n", named.c_str(), e.what());
    return 1;
  }
  if (best.empty()) {
    const bool any_ok =
        std::any_of(run.models.begin(), run.models.end(), [](const ModelReport& m) { return m.status == ModelStatus::ok; });
    std::fprintf(stderr, "multifit: error: %s: %s, so none was kept\n", named.c_str(),
                 any_ok ? ("no model has a value of " + run.rank_by).c_str() : "no model ended ok");
    return any_ok ? 2 : 0;  // with none ok, the models' own errors say why
  }
  std::string missing;
  for (const BestModel& m : best)
    if (m.weights.empty()) missing += (missing.empty() ? "" : ", ") + m.name + " (rank " + std::to_string(m.rank) + ")";
  if (!missing.empty()) {
    std::fprintf(stderr, "multifit: error: %s: the weights of %s were not kept: %s; %s lists them without weights\n",
                 named.c_str(), missing.c_str(),
                 resumed ? "they ended in the run that --resume finishes, whose staging folder did not hold them"
                         : "the staging folder did not hold them",
                 kBestIndex);
    return 1;
  }
  std::fprintf(stderr, "multifit: the best %zu by %s are in %s (%s names them)%s\n", best.size(), run.rank_by.c_str(),
               save.dir.c_str(), kBestIndex, best.size() < save.k ? (", all that have a value of " + run.rank_by).c_str() : "");
  return 0;
}

// --inject-fault NAME names a model of the sweep, or the run would train with no fault at all.
void check_fault_target(const std::vector<Job>& jobs, const RunOptions& options) {
  std::string names;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].name == options.inject_fault) return;
    if (i < 5) names += (i ? ", " : "") + jobs[i].name;
  }
  throw UserError("--inject-fault " + options.inject_fault + ": " + options.models_path + " has no model of that name; " +
                  (jobs.empty() ? "it has no models"
                                : "its models are " + names + (jobs.size() > 5 ? " and " + std::to_string(jobs.size() - 5) + " more" : "")));
}

// Under mpirun, this rank's GPU: --devices's, or every visible one's, taken by its rank on the node
// (so that the ranks of a node spread over its GPUs), before any CUDA context is made.
void pick_rank_device(RunOptions& options, const MpiWorld& world) {
  if (options.backend.kind != BackendKind::cuda) return;
  std::vector<int> devices = options.devices;
  if (devices.empty())
    for (const DeviceInfo& d : query_devices().devices) devices.push_back(d.index);
  if (devices.empty()) return;  // each model will say there is no device
  const int local = launcher_local_rank().value_or(world.local_rank());
  options.devices = {devices[size_t(local) % devices.size()]};
}

// Under mpirun without --threads, this rank's share of its node's cores: ranks that Open MPI did not
// bind apart (it binds up to 2 a node by default) would each take every core of their mask.
void share_node_cores(RunOptions& options, const MpiWorld& world) {
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  options.backend.threads = std::min(options.backend.threads, std::max(1, cores / world.local_size()));
}

// The ranks agree on whether the run can start: each gives the error that stopped it ("" for none)
// and what it is to run (`run`: its sweep's fingerprint, backend, mode, shard, --save-best), which
// must be rank 0's (a stale copy of the sweep on one node, an option given to some ranks only would
// mix models of two runs in one document). All get the first error, rank 0's before the others',
// naming the rank and its host; "" when every rank can start.
std::string agree_on_error(MpiWorld& world, const std::string& mine, const nlohmann::json& run) {
  const nlohmann::json me = {{"host", host_name()}, {"error", mine}, {"run", run}};
  const std::vector<std::string> each = world.gather(me.dump());
  std::string first = mine;
  for (size_t r = 1; r < each.size() && first.empty(); ++r) {
    const nlohmann::json rank = nlohmann::json::parse(each[r]);
    const std::string who = "rank " + std::to_string(r) + " (" + rank.at("host").get<std::string>() + "): ";
    if (const std::string error = rank.at("error"); !error.empty()) first = who + error;
    else if (rank.at("run") != run)
      first = who + "it is to run " + rank.at("run").dump() + ", but rank 0 " + run.dump() +
              ": every rank must be given the same sweep file, with the same contents, and the same options";
  }
  return world.broadcast(first);
}

// What a run has before it trains: its jobs and their sweep, an earlier run's journal (--resume), its own journal,
// and the exit code so far.
struct RunSetup {
  std::vector<Job> jobs;    // the sweep's, or its --shard's
  SweepIdentity sweep;      // the whole sweep's, for the document
  std::optional<SaveBest> save_best;
  std::optional<JournalContents> resumed;
  std::unique_ptr<Journal> journal;
  int code = 0;
};

// The modes' runs, their tables and the outputs (rank 0's alone under mpirun), after the setup.
int train_and_write(RunArgs& args, MpiWorld* world, RunSetup& setup) {
  RunOptions options = args.options;  // this run's: its stage_best holds the keeper, which ends with it
  const bool writer = !world || world->rank() == 0;
  std::vector<Job>& jobs = setup.jobs;
  std::optional<JournalContents>& resumed = setup.resumed;
  std::unique_ptr<Journal>& journal = setup.journal;
  int& code = setup.code;
  // --save-best: the keeper of the run whose models are kept (not a --solo run's, nor a calibration's).
  // Under mpirun each rank keeps its own best in a staging folder of its own, and rank 0 chooses from all.
  std::optional<BestKeeper> keeper;
  if (setup.save_best) {
    keeper.emplace(*setup.save_best, args.options.rank_by, staging_folder(world ? world->rank() : 0), args.resume && writer);
    options.stage_best = [&keeper](const ModelReport& m, const std::function<void()>& save) { keeper->stage(m, save); };
  }
  // What each mode's run has already (from the journal) and where it records each model as it ends:
  // the journal, and the keeper for the run whose models are `kept`.
  const auto record_of = [&](ModeKind mode, bool kept = false) {
    RunRecord record;
    if (resumed)
      if (const auto ended = resumed->ended.find(to_string(mode)); ended != resumed->ended.end())
        record.ended = &ended->second;
    BestKeeper* keeping = kept && keeper ? &*keeper : nullptr;
    if (keeping && record.ended)
      for (const auto& [index, ended] : *record.ended) keeping->resumed(ended.report);
    if (journal || keeping)
      record.on_ended = [&journal, &jobs, mode, keeping](size_t index, const ModelReport& report, int exit_code) {
        if (journal) journal->ended(to_string(mode), *job_at(jobs, index), report, exit_code);  // jobs may be a part of the sweep
        if (keeping) keeping->ended(report);
      };
    return record;
  };
  if (writer && !options.devices.empty() && options.backend.kind != BackendKind::cuda)
    std::fprintf(stderr, "multifit: note: --devices is recorded but has no effect on the %s backend\n",
                 to_string(options.backend.kind));
  options.timeline = true;
  const std::atomic<bool>& stop = stop_on_interrupt();
  // One mode's run: in this process, or over the ranks.
  const auto run_one = [&](ModeKind mode, bool kept = false) {
    return world ? run_over_ranks(mode, jobs, options, stop, &code, record_of(mode, kept), *world)
                 : run_mode(*make_mode(mode, options), jobs, options, stop, &code, record_of(mode, kept));
  };

  // --mode names a mode, or all (the four in turn), or auto (the fastest in a calibration).
  const std::vector<ModeKind> every_mode = {ModeKind::serial, ModeKind::streams, ModeKind::processes, ModeKind::packed};
  const bool all = args.mode == "all", automatic = args.mode == "auto";
  std::vector<ModeKind> modes = all ? every_mode : std::vector<ModeKind>{};
  if (!all && !automatic) modes = {parse_named(kModeNames, args.mode, "--mode")};
  std::optional<double> process_startup;
  if (args.solo || automatic || modes.size() > 1 || modes.front() != ModeKind::processes)
    process_startup = start_process(options.backend);
  nlohmann::json chosen;  // --mode auto: the calibration and its choice
  if (automatic && resumed && !resumed->auto_choice.is_null()) {
    chosen = resumed->auto_choice;
    modes = {parse_named(kModeNames, chosen.at("mode").get<std::string>(), "the journal's auto choice")};
    std::fprintf(stderr, "multifit: auto: %s, as the journal's run chose (no calibration on resume)\n", to_string(modes[0]));
  } else if (automatic) {
    modes = {choose_mode(every_mode, jobs, options, stop, args, chosen)};
    if (journal) journal->auto_choice(chosen);
  } else if (writer && args.calibration_steps_given)
    std::fprintf(stderr, "multifit: note: --calibration-steps has no effect without --mode auto\n");
  if (writer && args.pack_size_given && !all && !automatic && modes.front() != ModeKind::packed)
    std::fprintf(stderr, "multifit: note: --pack-size has no effect without --mode packed (or all, auto)\n");
  if (writer && options.keep_pools && !all && !automatic && modes.front() != ModeKind::serial)
    std::fprintf(stderr, "multifit: note: --keep-pools has no effect without --mode serial (or all, auto): the other "
                         "modes hold every model's pool while they train\n");
  if (writer && options.stall_timeout_s && !all && !automatic && modes.front() != ModeKind::processes)
    std::fprintf(stderr, "multifit: note: --stall-timeout has no effect without --mode processes (or all, auto): "
                         "a model in this process cannot be ended alone\n");
  const bool solo_first = args.solo && modes.front() != ModeKind::serial;
  std::vector<RunReport> runs;
  if (keeper) keeper->keep(jobs);  // from here on each model that ends ok stages its weights
  for (int repeat = 1; repeat <= args.repeat && !(stop && repeat > 1); ++repeat) {
    const std::string of = args.repeat > 1 ? " (run " + std::to_string(repeat) + " of " + std::to_string(args.repeat) + ")" : "";
    std::optional<RunReport> serial;  // each repetition against its own serial (or solo) run
    if (solo_first) {
      if (writer && !options.quiet) std::fprintf(stderr, "multifit: solo runs%s: each model alone, for its slowdown\n", of.c_str());
      serial = run_one(ModeKind::serial);
    }
    for (const ModeKind mode : modes) {
      if (writer && (modes.size() > 1 || args.repeat > 1) && !options.quiet)
        std::fprintf(stderr, "multifit: mode %s%s\n", to_string(mode), of.c_str());
      RunReport run = run_one(mode, true);
      if (!writer) continue;  // rank 0 has the run's report
      if (mode != ModeKind::processes) run.process_startup_s = process_startup;
      run.repeat = repeat;
      run.auto_choice = chosen;
      run.sweep = setup.sweep;
      run.shard = args.shard;
      if (mode == ModeKind::serial) serial = run;
      if (serial) compare_with_serial(run, *serial);
      rank_run(run, args.options.rank_by);
      if (repeat == 1) print_run_table(run, runs.empty());
      else print_run_line(run);
      runs.push_back(std::move(run));
    }
  }
  if (journal && !journal->error().empty()) {
    std::fprintf(stderr, "multifit: error: %s; the models that ended after it are not in it (--resume would train them again)\n",
                 journal->error().c_str());
    code = worse_exit_code(code, kExitFailure);
  }
  if (writer) {
    if (args.repeat > 1) print_repeats_table(runs);
    else if (runs.size() > 1) print_modes_table(runs);
    print_errors(runs);
    if (code == kExitInterrupted) print_resume_note(runs, journal ? journal_path(args) : "");
    if (keeper && (stop || code == kExitInterrupted))  // interrupted here or on a rank: --resume finishes the run, and takes the staged weights on
      std::fprintf(stderr, "multifit: note: --save-best: the run was interrupted, so its best are not chosen yet; the "
                           "weights it staged stay in %s for --resume\n", keeper->staging().c_str());
    else if (keeper) {
      std::vector<std::string> staging;  // every rank's
      for (int rank = 0; rank < (world ? world->size() : 1); ++rank)
        staging.push_back((std::filesystem::path(setup.save_best->dir) / staging_folder(rank)).string());
      code = worse_exit_code(code, save_best_models(*keeper, staging, runs.back(), jobs, args.resume));
    }
    code = write_output_files(runs, args.files, code);
  }
  // Rank 0's code is the run's: its models' and its outputs'. Another rank's is its own failures'
  // alone (its journal's), so that mpirun's is rank 0's unless a rank failed apart.
  std::fflush(stdout);
  return code;
}

// Under mpirun, every rank runs this (study/ranks.h): each reads the sweep, journals its own models
// and trains its shares; rank 0 alone (the writer) reads a journal to resume, prints, and writes the
// outputs. The ranks agree before any of them trains: a rank that cannot start stops them all.
int run_study(RunArgs& args) {
  std::optional<MpiWorld> world;
  if (launched_by_mpi()) world.emplace();
  if (world && world->size() == 1) world.reset();  // a world of one is one process
  const bool writer = !world || world->rank() == 0;
  RunOptions& options = args.options;
  const std::string journal_file = journal_path(args);
  RunSetup setup;
  std::vector<Job>& jobs = setup.jobs;
  std::optional<JournalContents>& resumed = setup.resumed;
  std::unique_ptr<Journal>& journal = setup.journal;
  int& code = setup.code;
  EndedModels ranks_ended;  // --resume: what the journals of an earlier run's other ranks recorded (mpirun)
  JournalRun journal_run;   // what the journals are of
  std::string cannot_start;  // under mpirun: why this rank cannot start
  try {
    if (world && args.mode == "auto")
      throw UserError("--mode auto is not available under mpirun: its calibration times the modes in one process; run "
                      "--mode auto in one process first, then give the mode it chose");
    if (world && !args.files.trace.empty())
      throw UserError("--trace is not available under mpirun: each rank's step timeline is on its own machine's "
                      "clock; trace a run in one process");
    if (args.repeat > 1 && (args.resume || !args.journal.empty()))
      throw UserError(std::string(args.resume ? "--resume" : "--journal") + " with --repeat " +
                      std::to_string(args.repeat) +
                      ": a journal holds one run of each mode, and --repeat makes several; drop one of them");
    if (args.repeat > 1 && args.save_best_given)
      throw UserError("--save-best keeps the models of one run, and --repeat " + std::to_string(args.repeat) +
                      " makes several: drop one of them");
    if (!options.inject_fault.empty() && (args.mode == "all" || args.mode == "auto" || args.solo))
      throw UserError("--inject-fault with " + std::string(args.solo ? "--solo" : "--mode " + args.mode) +
                      ": on the CPU the fault ends the process of an in-process run (" +
                      (args.solo ? "the solo runs" : args.mode == "all" ? "serial, the first of the four" : "the calibration") +
                      "), and the runs after it would never be measured; give one --mode without --solo");
    if (args.resume && journal_file.empty())
      throw UserError("--resume needs the journal of the run to resume: give that run's --json OUT (its journal is "
                      "OUT.journal) or --journal PATH");
    if (is_standard_output(journal_file))
      throw UserError("--journal -: the journal is read back by --resume, so it needs a file; give a file name");
    if (args.save_best_given) setup.save_best = SaveBest{size_t(args.save_best.first), args.save_best.second};
    const std::optional<SaveBest>& save_best = setup.save_best;
    if (writer) {
      const std::string best_index = save_best ? (std::filesystem::path(save_best->dir) / kBestIndex).string() : "";
      std::vector<NamedFile> others = {{"--journal", journal_file},
                                       {"--save-best's index", best_index}};
      for (int rank = 1; world && !journal_file.empty() && rank < world->size(); ++rank)
        others.push_back({"a rank's journal", rank_journal_path(journal_file, rank)});
      prepare_output_files(args.files, {{"the sweep", options.models_path}}, others);
      if (!args.resume) check_output_path(args.journal.empty() ? "--journal (beside --json)" : "--journal", journal_file);
    }
    if (save_best) {
      if (args.mode == "all")
        throw UserError("--save-best keeps the models of one run, and --mode all makes four: give one --mode (serial, "
                        "streams, processes, packed or auto)");
      check_save_best_dir(*save_best);
    }
    Sweep sweep;
    try {
      sweep = load_sweep(options.models_path);
      const bool automatic = options.backend.kind == BackendKind::automatic;
      options.backend = resolve_auto(options.backend, std::cerr);
      try {
        if (options.backend.kind == BackendKind::cpu) check_cpu_options(options.backend);  // before any work: every model would fail
      } catch (const UserError& e) {
        if (!automatic) throw;
        throw UserError(std::string(e.what()) + " (--backend auto chose cpu: no usable CUDA device)");
      }
      if (world) pick_rank_device(options, *world);
      if (world && !args.threads_given) share_node_cores(options, *world);
      jobs = make_jobs(sweep, options);
      if (sweep.scheduler) {
        // A trial's verdict waits for those before it in the sweep (study/rungs.h): one table must see them all.
        if (world || args.shard)
          throw UserError(options.models_path + ": scheduler: not available " +
                          (world ? std::string("under mpirun") : "with --shard") +
                          " yet: each part would judge its trials against its own only, and decide otherwise than "
                          "one run; run the sweep in one process (any --mode)");
        options.scheduler = scheduler_for(*sweep.scheduler, jobs);
      }
      if (!options.inject_fault.empty()) check_fault_target(jobs, options);
      if (save_best) check_save_best_metric(jobs, args.options.rank_by);
    } catch (const UserError& e) {  // the document is written whatever failed: here, with no model
      if (writer) {
        RunReport unread;
        unread.mode = args.mode;
        unread.error = e.what();
        unread.shard = args.shard;
        write_output_files({unread}, {args.files.json, "", ""}, 2);  // the document alone: no model for a row
      }
      throw;
    }
    const SweepIdentity& sweep_identity = setup.sweep = identify_sweep(sweep, jobs);  // whatever part runs
    if (args.shard) {  // this run's part of the sweep; each job keeps its index, its place in the sweep
      jobs = shard_jobs(jobs, *args.shard);
      spread_over_devices(jobs, options.devices);  // over this run's models, not the sweep's places
      if (writer && jobs.empty())
        std::fprintf(stderr, "multifit: note: shard %s has no models: the sweep has %zu; its document has none\n",
                     to_string(*args.shard).c_str(), sweep_identity.models);
      else if (writer && !options.quiet) {
        std::string places;
        for (size_t i = 0; i < jobs.size() && i < 3; ++i) places += (i ? ", #" : "#") + std::to_string(jobs[i].index);
        std::fprintf(stderr, "multifit: shard %s: %zu of the sweep's %zu models: %s%s (one in %zu)\n",
                     to_string(*args.shard).c_str(), jobs.size(), sweep_identity.models, places.c_str(),
                     jobs.size() > 3 ? ", ..." : "", args.shard->count);
      }
    }
    if (writer && args.shard && !options.inject_fault.empty() &&
        std::none_of(jobs.begin(), jobs.end(), [&](const Job& j) { return j.name == options.inject_fault; }))
      std::fprintf(stderr, "multifit: note: --inject-fault %s: that model is in another shard than %s, so nothing faults "
                           "here\n", options.inject_fault.c_str(), to_string(*args.shard).c_str());
    journal_run = {to_string(options.backend.kind), args.mode, args.solo, sweep_identity, args.shard, options.scheduler};
    const JournalRun& run = journal_run;
    if (args.resume && writer) {
      resumed = read_with_rank_journals(journal_file, jobs, run, &ranks_ended);
      size_t models = 0;
      std::string where;  // "2 in serial mode in OUT.journal, 4 in serial mode in the other ranks' journals"
      const auto count = [&](const auto& ended_by_mode, const std::string& in) {
        for (const auto& [mode, ended] : ended_by_mode) {
          models += ended.size();
          where += (where.empty() ? "" : ", ") + std::to_string(ended.size()) + " in " + mode + " mode in " + in;
        }
      };
      count(resumed->ended, journal_file);
      count(ranks_ended, "the other ranks' journals");
      if (models == 0)
        std::fprintf(stderr, "multifit: resume: no model ended before (%zu model lines in %s)\n", resumed->lines,
                     journal_file.c_str());
      else
        std::fprintf(stderr, "multifit: resume: %zu model%s ended before (%s); %s not trained again\n", models,
                     models == 1 ? "" : "s", where.c_str(), models == 1 ? "it is" : "they are");
    }
    if (writer) {
      journal = open_journal(journal_file, run, resumed ? &*resumed : nullptr, options.quiet, &code);
      // This journal takes in what an earlier run's other ranks recorded, before this run's start theirs afresh.
      for (const auto& [mode, ended] : ranks_ended)
        for (const auto& [index, model] : ended) {
          if (journal) journal->ended(mode, *job_at(jobs, index), model.report, model.exit_code);
          resumed->ended[mode][index] = model;
        }
      // The earlier ranks' journals are set aside once this one holds what they recorded.
      if (!journal_file.empty() && (journal || !args.resume)) set_aside_rank_journals(journal_file, world ? world->size() : 1);
      if (save_best) gather_staging(*save_best, args.resume);  // before the other ranks make their keepers
    }
  } catch (const std::exception& e) {
    if (!world) throw;
    cannot_start = e.what();
    if (cannot_start.empty()) cannot_start = "an unnamed failure";
  }
  if (world) {
    const nlohmann::json run = {{"sweep", setup.sweep}, {"backend", journal_run.backend}, {"mode", journal_run.mode},
                                {"solo", journal_run.solo}, {"shard", args.shard ? to_string(*args.shard) : ""},
                                {"save_best", args.save_best_given ? nlohmann::json(args.save_best) : nlohmann::json()}};
    const std::string agreed = agree_on_error(*world, cannot_start, run);
    if (!agreed.empty()) {
      if (!writer) return 0;  // rank 0 says why, and its exit code is the job's (runtime/mpi_world.h)
      RunReport unstarted;  // the document is written whatever failed: here, with no model
      unstarted.mode = args.mode;
      unstarted.error = agreed;
      unstarted.shard = args.shard;
      write_output_files({unstarted}, {args.files.json, "", ""}, 2);
      throw UserError(agreed);
    }
    if (!writer && !journal_file.empty())
      journal = open_journal(rank_journal_path(journal_file, world->rank()), journal_run, nullptr, true, &code);
  }
  if (!world) return train_and_write(args, nullptr, setup);
  try {
    return train_and_write(args, &*world, setup);
  } catch (const std::exception& e) {  // the others would wait on this rank for ever: the job ends
    std::fprintf(stderr, "multifit: failure: rank %d: %s; the job is aborted (--resume finishes it)\n", world->rank(),
                 e.what());
    world->abort(1);
  }
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  RunOptions& o = args->options;
  CLI::App* cmd = app.add_subcommand("run", "Train a sweep of models serially, on streams, as processes or packed "
                                            "into shared kernels, and measure how they share the machine");
  cmd->add_option("sweep", o.models_path, "Sweep file (JSON: a base spec and grid axes or a search space, or a list of models; any with a scheduler), or one "
                                    "model's spec; e.g. examples/fashion-mnist-grid.json")
      ->required();
  cmd->add_option("--mode", args->mode, "serial: one model after another; streams: one thread and stream per "
                                        "model; processes: one process per model; packed: models of one shape "
                                        "and fit (layers, loss, optimizer kind, batch size, epochs, data, memory "
                                        "mode) trained together in shared kernels; all: the four in turn; auto: the "
                                        "fastest in a short calibration on the sweep's own models")
      ->check(CLI::IsMember(mode_choices()))
      ->type_name("ENUM")
      ->capture_default_str();
  cmd->add_option("--pack-size", o.pack_size, "--mode packed: at most N models in a pack (0: no bound)")
      ->check(whole_number(0, int(kMaxPackSize)))
      ->capture_default_str();
  cmd->add_option("--concurrency", o.concurrency,
                  "At most K models at once, the rest in later phases (0: all at once). Default: as many as the "
                  "machine holds (memory, and for processes cores, open files, processes), said on stderr when "
                  "fewer than all; above that bound K runs as asked, with a warning")
      ->check(whole_number(0, INT_MAX));
  cmd->add_option("--stall-timeout", o.stall_timeout_s,
                  "--mode processes: a worker that takes no training step for SECONDS (or uses no CPU while it "
                  "builds) is killed and its model failed as stalled (0: never). Default: 10 times its slowest "
                  "epoch so far, never under 60")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            char* end = nullptr;
            const double value = std::strtod(text.c_str(), &end);
            const bool ok = end != text.c_str() && *end == '\0' && std::isfinite(value) && value >= 0;
            return ok ? "" : "got " + text + "; expected a number of seconds, 0 or more (0: never)";
          },
          ""))
      ->type_name("SECONDS");
  cmd->add_flag("--keep-pools", o.keep_pools,
                "--mode serial: keep every model's pool until the last model has trained, as a Keras loop without "
                "clear_session() keeps its models' memory (each model's in_use_before_release_bytes then shows "
                "what the run held when it ended)");
  cmd->add_option("--inject-fault", o.inject_fault,
                  "Make a real fault in the model NAME after its first epoch, to see what it takes down with it: "
                  "on the CPU its thread gets SIGSEGV (the process ends, as at a stray pointer), on a GPU a kernel "
                  "writes to an illegal address (the sticky error poisons the process's CUDA context). One --mode, "
                  "not all or auto, without --solo: a fault in an in-process run on the CPU ends the run")
      ->check(CLI::Validator(
          [](std::string& name) -> std::string {
            if (name.empty()) return "the name of a model of the sweep, not empty";
            return name.starts_with("-") ? "the model NAME, " + name + ", looks like a flag: give a model's name" : "";
          },
          "NAME"))
      ->type_name("NAME");
  cmd->add_option("--calibration-steps", args->calibration_steps,
                  "--mode auto: training steps per model in each mode's calibration")
      ->check(whole_number(1, INT_MAX))
      ->capture_default_str();
  cmd->add_flag("--solo", args->solo, "Run each model alone first, for its slowdown (--mode all has it)");
  cmd->add_option("--repeat", args->repeat,
                  "Run the modes N times, interleaved (serial, streams, ..., serial, streams, ...), and report each "
                  "figure's median, min and max: one run on a shared machine can mislead. Keeps no journal")
      ->check(whole_number(1, 100))
      ->capture_default_str();
  cmd->add_option("--devices", o.devices, "GPUs to spread the models over, round robin, e.g. 0,1")
      ->delimiter(',')
      ->check(whole_number(0, 1023));
  add_backend_options(*cmd, o.backend);
  add_spec_overrides(*cmd, o.overrides);
  add_data_option(*cmd, o.data);
  add_output_options(*cmd, args->files);
  cmd->add_option("--rank-by", o.rank_by,
                  "Rank the models by this metric (default: val_accuracy where models were validated, else "
                  "val_loss, test_accuracy, test_loss, train_s, the first some model has); a run of more than 24 "
                  "models prints its best and worst 5")
      ->transform(one_of(kRankByNames));
  cmd->add_option("--save-best", args->save_best,
                  "Keep the weights of the best K models by the ranking (--rank-by) in the folder DIR (made when "
                  "missing): NAME.weights, as train --save writes them, beside NAME.spec.json, its spec (train "
                  "DIR/NAME.spec.json --load DIR/NAME.weights --epochs 0 evaluates one), and best.json, which lists "
                  "them by rank with their metric and settings. NAME is the model's name, each byte other than a "
                  "letter, digit or ._-+= written %XX. While the run goes, each model that ends ok stages its "
                  "weights in DIR/.staging and only those that may still be among the best stay there. Any --mode "
                  "but all")
      ->check(whole_number(1, INT_MAX).application_index(0))
      ->check(CLI::Validator(
                  [](std::string& dir) {
                    return dir.starts_with("-") ? "the folder DIR, " + dir + ", looks like a flag: give K, then DIR" : "";
                  },
                  "DIR")
                  .application_index(1))
      ->type_name("K DIR");
  cmd->add_option("--journal", args->journal, "Record each model here as it ends, one JSON line each (default: "
                                              "OUT.journal beside --json OUT), so that --resume can finish the run");
  cmd->add_option_function<std::string>(
         "--shard", [args](const std::string& text) { read_shard(text, args->shard.emplace()); },
         "Train only part I of N of the sweep: its models at places I, I+N, I+2N, ... (0 <= I < N, 0-based as a "
         "Slurm array's %a with --array=0-(N-1)); the document holds those models and names the sweep and the "
         "shard, and multifit merge makes the parts' documents one")
      ->check(shard_value())
      ->type_name("I/N");
  cmd->add_flag("--resume", args->resume, "Finish an interrupted run: skip the models its journal (--journal, or "
                                         "--json OUT's) records as ended, train the rest, write the whole document");
  cmd->add_flag("--quiet", o.quiet, "No per-epoch progress lines, and no notes between them (the packs, serial's "
                                    "releases, auto's calibrations); the tables and errors stay");
  cmd->add_flag("--verbose", o.verbose, "Every model's epoch lines, however many models (without it, a run of more "
                                        "models than the terminal has rows, or than 8 on a file or pipe, shows one "
                                        "status line: models ended, time left, the best so far)")
      ->excludes("--quiet");
  return [args, calibration = cmd->get_option("--calibration-steps"), pack_size = cmd->get_option("--pack-size"),
          save_best = cmd->get_option("--save-best"), threads = cmd->get_option("--threads")] {
    args->calibration_steps_given = calibration->count() > 0;
    args->pack_size_given = pack_size->count() > 0;
    args->save_best_given = save_best->count() > 0;
    args->threads_given = threads->count() > 0;
    return run_study(*args);
  };
}

}  // namespace mf
