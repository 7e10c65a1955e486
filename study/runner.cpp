#include "study/runner.h"

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <thread>

#include "study/concurrency.h"
#include "study/model_worker.h"
#include "study/modes/processes/worker_mps.h"
#include "study/report/answer.h"
#include "study/report/combine_parts.h"
#include "study/sweep/rungs.h"
#include "runtime/build_info.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/machine_load.h"
#include "runtime/machine_resources.h"
#include "runtime/mps.h"
#include "runtime/nvml_monitor.h"
#include "runtime/process_memory.h"

namespace mf {

ModelReport not_started(const Job& job, const RunOptions& options) {
  ModelWorker worker(job, options);
  worker.fail(kNotStarted, kExitInterrupted);
  return worker.report();
}

const ModelReport* ended_before(const Job& job, const RunRecord& record, int* exit_code) {
  if (!record.ended) return nullptr;
  const auto e = record.ended->find(job.index);
  if (e == record.ended->end()) return nullptr;
  *exit_code = worse_exit_code(*exit_code, e->second.exit_code);
  return &e->second.report;
}

std::vector<Job> jobs_to_train(const std::vector<Job>& all_jobs, const RunRecord& record) {
  std::vector<Job> jobs;
  for (const Job& job : all_jobs)
    if (!record.ended || !record.ended->contains(job.index)) jobs.push_back(job);
  return jobs;
}

std::string no_gpu_note(BackendKind backend) {
  return "no GPU sampled: the " + std::string(to_string(backend)) + " backend runs on the CPU";
}

void note_options(RunReport& run, ModeKind mode, const RunOptions& options) {
  run.mode = to_string(mode);
  run.pools_kept = options.keep_pools && mode == ModeKind::serial;
  run.injected_fault = options.inject_fault;
  if (options.sm_partitions > 0 && (mode == ModeKind::streams || mode == ModeKind::packed))
    run.sm_partitions = options.sm_partitions;
}

namespace {

// The machine between two readings, around one run.
MachineRecord machine_record(const MachineLoad& before, const MachineLoad& after,
                             bool within_cores) {
  MachineRecord m;
  m.multifit =
      std::string("multifit ") + multifit_version() + " (commit " + multifit_commit() + ")";
  m.cores = usable_cores();
  m.hardware_threads = int(std::thread::hardware_concurrency());
  m.memory_total_bytes = mem_total_bytes();
  m.load_average_before = before.load_average_1m;
  m.load_average_after = after.load_average_1m;
  const LoadBetween between = load_between(before, after);
  m.others_busy_cores = between.others_busy_cores;
  m.cpu_pressure = between.cpu_pressure;
  m.busy = busy_machine(between, m.cores, within_cores);
  return m;
}

// How many models train at once: none to train says so; a rank's shares take the rank's choice.
ConcurrencyChoice concurrency_of(ModeKind mode, const std::vector<Job>& all_jobs,
                                 const std::vector<Job>& jobs, const RunOptions& options,
                                 const std::atomic<bool>& stop, const RunRecord& record) {
  if (all_jobs.empty()) return {1, "none to train: this part of the sweep has no models", ""};
  if (jobs.empty()) return {1, "none to train: every model ended before (the journal)", ""};
  return record.concurrency ? *record.concurrency : choose_concurrency(mode, jobs, options, stop);
}

// The models' progress, known by their job index, their place in the sweep: `all_jobs` may be a
// part of it (a shard, an MPI rank's share), so the places between are left unnamed. `jobs` train.
std::unique_ptr<Progress> progress_of(const std::vector<Job>& all_jobs,
                                      const std::vector<Job>& jobs, const RunOptions& options,
                                      size_t per_phase) {
  std::vector<std::string> names;
  std::vector<size_t> order;  // the models that train, by job index
  for (const Job& job : all_jobs) {
    if (names.size() <= job.index) names.resize(job.index + 1);
    names[job.index] = job.name;
  }
  for (const Job& job : jobs) order.push_back(job.index);
  std::vector<int> epochs(names.size(), 0);
  for (const Job& job : all_jobs)
    if (job.spec) epochs[job.index] = job.spec->fit.epochs;
  return std::make_unique<Progress>(
      names, options.quiet, per_phase, StillRunning{}, order,
      ProgressStyle{options.verbose, options.rank_by, epochs, options.status});
}

// The scheduler's table of the whole sweep's trials, those that ended before in with their rungs;
// none without a scheduler.
std::unique_ptr<RungTable> rung_table(const std::vector<Job>& all_jobs, const RunOptions& options,
                                      const RunRecord& record) {
  if (!options.scheduler) return nullptr;
  std::vector<size_t> trials;
  for (const Job& job : all_jobs) trials.push_back(job.index);
  auto rungs = std::make_unique<RungTable>(*options.scheduler, trials);
  for (const Job& job : all_jobs)
    if (int ignored = 0; const ModelReport* ended = ended_before(job, record, &ignored))
      rungs->record_ended(*ended);
  return rungs;
}

// What the phases trained: a report per job, in the jobs' order, and the times they took.
struct Trained {
  std::vector<ModelReport> models;
  // summed over the phases: up to their start barriers, and after
  double startup_s = 0, train_s = 0;
  std::optional<int> threads;  // the most host threads of any phase
};

// Trains `jobs` in phases of `per_phase` models, one after another; once `stop` is set, the phases
// left are not started. *exit_code takes the worst of the models' codes.
Trained train_phases(Mode& mode, const std::vector<Job>& jobs, size_t per_phase,
                     const RunOptions& options, const std::atomic<bool>& stop, Progress& progress,
                     RungJudge* rungs, int* exit_code) {
  Trained trained;
  for (size_t first = 0; first < jobs.size(); first += per_phase) {
    const std::span<const Job> phase_jobs(jobs.data() + first,
                                          std::min(per_phase, jobs.size() - first));
    if (stop) {
      for (const Job& job : phase_jobs) trained.models.push_back(not_started(job, options));
      *exit_code = worse_exit_code(*exit_code, kExitInterrupted);
      continue;
    }
    const double phase_start = clock_seconds();
    Phase phase = mode.run(phase_jobs, stop, progress, rungs);
    trained.startup_s += phase.released_s - phase_start;
    trained.train_s += clock_seconds() - phase.released_s;
    *exit_code = worse_exit_code(*exit_code, phase.exit_code);
    if (phase.threads > 0) trained.threads = std::max(trained.threads.value_or(0), phase.threads);
    for (ModelReport& m : phase.reports) trained.models.push_back(std::move(m));
  }
  return trained;
}

// The run's figures of the models it trained itself (a journal's have no timeline, and their time
// was another run's): start-up, training and throughput, its workers' memory, the overlap of their
// steps.
void measure_training(RunReport& run, const Trained& trained, const RunOptions& options,
                      ModeKind mode) {
  int64_t samples = 0;
  std::vector<Track> tracks;
  for (const ModelReport& m : trained.models) {
    samples += m.samples;
    if (!m.fit.steps.empty()) tracks.push_back(m.fit.steps);
    if (m.process_peak_rss_bytes)
      run.workers_peak_rss_bytes =
          run.workers_peak_rss_bytes.value_or(0) + *m.process_peak_rss_bytes;
  }
  run.training_threads = trained.threads;
  // Never measured, rather than 0, when no model got as far as its start-up (no backend, say).
  const auto started = [](const ModelReport& m) { return m.startup_s.has_value(); };
  if (std::any_of(trained.models.begin(), trained.models.end(), started))
    run.startup_s = trained.startup_s;
  // Figures of training exist only when some model trained.
  if (samples > 0) {
    run.train_s = trained.train_s;
    run.samples_per_s = double(samples) / trained.train_s;
  }
  if (options.timeline && !tracks.empty()) {
    run.overlap = measure_overlap(tracks);
    const bool time_sliced = mode == ModeKind::processes && run.mps == false;
    run.overlap_kind = time_sliced ? "interleaved" : "concurrent";
  }
}

// How the mode used the run's cores, on the cpu backend: what trained at once (processes mode's
// workers, the other modes' host threads) and the most threads any model or pack had.
std::optional<Arrangement> arrangement_of(const RunReport& run, const RunOptions& options,
                                          ModeKind mode) {
  if (run.backend != "cpu") return std::nullopt;
  Arrangement a;
  a.cores = std::max(1, options.backend.threads);
  a.at_once = mode == ModeKind::processes ? run.concurrency : run.training_threads.value_or(1);
  for (const ModelReport& m : run.models)
    if (m.settings && m.settings->threads)
      a.threads_each = std::max(a.threads_each, *m.settings->threads);
  return a;
}

// run.mps and mps_daemon: processes mode's as its workers get it (`workers`), the other modes' as
// the models' contexts in this process will find it.
void record_mps(RunReport& run, const WorkerMps* workers) {
  run.mps = workers ? workers->under_mps() : mps_daemon_running();
  if (workers)
    run.mps_daemon = workers->daemon();
  else if (*run.mps)
    run.mps_daemon = "found";
}

// The run's models in sweep order: those that ended before (the journal's, their codes taken into
// *exit_code) where they were, and `trained` (the rest, in order) between them.
std::vector<ModelReport> in_sweep_order(std::vector<ModelReport> trained,
                                        const std::vector<Job>& all_jobs, const RunRecord& record,
                                        int* exit_code) {
  if (!record.ended) return trained;
  std::vector<ModelReport> models;
  size_t next = 0;
  for (const Job& job : all_jobs) {
    const ModelReport* ended = ended_before(job, record, exit_code);
    models.push_back(ended ? *ended : std::move(trained[next++]));
  }
  return models;
}

}  // namespace

RunReport run_mode(Mode& mode, const std::vector<Job>& all_jobs, const RunOptions& options,
                   const std::atomic<bool>& stop, int* exit_code, const RunRecord& record) {
  RunReport run;
  note_options(run, mode.kind(), options);
  // those that ended before keep their places
  const std::vector<Job> jobs = jobs_to_train(all_jobs, record);
  // Processes mode's MPS (--mps), before any worker starts, the probe's too; a UserError (no daemon
  // for an SM share, one that cannot start) ends the run before any model starts.
  std::optional<WorkerMps> worker_mps;
  if (options.backend.kind == BackendKind::cuda && mode.kind() == ModeKind::processes)
    worker_mps.emplace(options, jobs);
  run.resumed_models = int(all_jobs.size() - jobs.size());
  const ConcurrencyChoice concurrency =
      concurrency_of(mode.kind(), all_jobs, jobs, options, stop, record);
  run.concurrency = jobs.empty() ? 0 : int(concurrency.per_phase);
  run.concurrency_reason = concurrency.reason;
  const std::unique_ptr<Progress> progress =
      progress_of(all_jobs, jobs, options, concurrency.per_phase);
  const std::unique_ptr<RungTable> table = rung_table(all_jobs, options, record);
  RungJudge* const rungs = options.judge ? options.judge : table.get();
  // A model that ends, however it ends (a failed build too), is waited for at no later rung.
  progress->on_ended([rungs, &record](size_t model, const ModelReport& report, int code) {
    if (rungs) rungs->ended(model);
    if (record.on_ended) record.on_ended(model, report, code);
  });
  std::optional<NvmlMonitor> monitor;
  // Every GPU of --devices, found in NVML by its PCI bus id; in processes mode each worker sees
  // only its own, but this process sees them all.
  if (options.backend.kind == BackendKind::cuda) {
    monitor.emplace(gpu_targets(options.devices.empty() ? std::vector<int>{0} : options.devices));
    record_mps(run, worker_mps ? &*worker_mps : nullptr);
  }
  const MachineLoad load_before = read_machine_load();
  const double start = clock_seconds();
  Trained trained =
      train_phases(mode, jobs, concurrency.per_phase, options, stop, *progress, rungs, exit_code);
  run.wall_s = clock_seconds() - start;
  run.machine =
      machine_record(load_before, read_machine_load(), mode.kind() != ModeKind::processes);
  measure_training(run, trained, options, mode.kind());
  run.models = in_sweep_order(std::move(trained.models), all_jobs, record, exit_code);
  if (options.scheduler) run.scheduler = summarize_scheduler(*options.scheduler, run.models);
  if (!monitor)
    run.gpu_note = no_gpu_note(options.backend.kind);
  else
    report_gpus(run, monitor->stop());
  describe_models(run);
  run.arrangement = arrangement_of(run, options, mode.kind());
  run.host_peak_rss_bytes = peak_resident_bytes();
  return run;
}

std::vector<Calibration> calibrate(const std::vector<ModeKind>& modes, const std::vector<Job>& jobs,
                                   const RunOptions& options, const std::atomic<bool>& stop,
                                   int64_t steps) {
  RunOptions short_run = options;
  short_run.calibration_steps = steps;
  short_run.quiet = true;
  short_run.scheduler.reset();  // a calibration times the modes: every model trains its steps
  std::vector<Calibration> result;
  for (const ModeKind kind : modes) {
    int ignored = 0;
    const RunReport run = run_mode(*make_mode(kind, short_run), jobs, short_run, stop, &ignored);
    // The rate while training: the calibration's samples over the span of its steps, from the first
    // step's start to the last one's end (a short run's teardown is not training); planned: the
    // whole sweep's samples (every model's rows times its epochs).
    int64_t planned_samples = 0, calibration_samples = 0;
    double first = INFINITY, last = -INFINITY;
    for (size_t i = 0; i < jobs.size(); ++i) {
      const ModelReport& m = run.models[i];
      if (jobs[i].spec) planned_samples += m.train_rows * jobs[i].spec->fit.epochs;
      calibration_samples += m.samples;
      if (!m.fit.steps.empty()) {
        first = std::min(first, m.fit.steps.front().begin_s);
        last = std::max(last, m.fit.steps.back().end_s);
      }
    }
    Calibration c{kind, run.startup_s, std::nullopt, std::nullopt, why_unjudged(run)};
    if (calibration_samples > 0 && last > first) {
      c.samples_per_s = double(calibration_samples) / (last - first);
      c.predicted_wall_s = c.startup_s.value_or(0) + double(planned_samples) / *c.samples_per_s;
    }
    result.push_back(c);
  }
  std::stable_sort(result.begin(), result.end(), [](const Calibration& a, const Calibration& b) {
    return a.predicted_wall_s.value_or(INFINITY) < b.predicted_wall_s.value_or(INFINITY);
  });
  return result;
}

void compare_with_serial(RunReport& run, const RunReport& serial) {
  // Comparable only when both trained every model: a failed model's time is no training time.
  const auto all_trained = [](const RunReport& r) {
    return std::all_of(r.models.begin(), r.models.end(),
                       [](const ModelReport& m) { return m.fitted; });
  };
  // And only when both trained all their models themselves: a resumed run's wall is of its rest
  // alone.
  if (all_trained(run) && all_trained(serial) && run.resumed_models == 0 &&
      serial.resumed_models == 0 && run.wall_s > 0) {
    run.speedup_vs_serial = serial.wall_s / run.wall_s;
    run.serial_wall_s = serial.wall_s;
  }
  // A pack trains its members in one time: the pack's (its longest member's train_s) against the
  // sum of their solo times, every member with one; each member charged the whole pack's time would
  // count it once per member.
  struct PackTimes {
    double train_s = 0, solo_sum_s = 0;
    bool complete = true;
  };
  std::map<int, PackTimes> packs;
  for (size_t i = 0; i < run.models.size(); ++i) {
    ModelReport& m = run.models[i];
    const ModelReport* solo = i < serial.models.size() ? &serial.models[i] : nullptr;
    const bool has_solo =
        solo && solo->fitted && solo->fit.train_s > 0 && solo->status == ModelStatus::ok;
    if (has_solo) m.solo_s = solo->fit.train_s;
    if (!m.pack) {
      if (has_solo && m.fitted && m.status == ModelStatus::ok)
        m.slowdown = m.fit.train_s / *m.solo_s;
      continue;
    }
    PackTimes& pack = packs[*m.pack];
    pack.train_s = std::max(pack.train_s, m.fitted ? m.fit.train_s : 0.0);
    pack.solo_sum_s += has_solo ? *m.solo_s : 0;
    pack.complete = pack.complete && has_solo;
  }
  for (ModelReport& m : run.models)
    if (m.pack && m.fitted && m.status == ModelStatus::ok) {
      const PackTimes& pack = packs.at(*m.pack);
      if (pack.complete) m.slowdown = pack.train_s / pack.solo_sum_s;
    }
}

}  // namespace mf
