#pragma once
// The runner of a study (HFTA's workflow runner is the picture): it splits the jobs into phases of
// at most --concurrency models, hands each phase to the mode, and measures around the mode: the
// run's wall and start-up time, its throughput, the models' overlap from their step timelines, the
// GPU through NVML. It assembles the run report from the reports the workers return, and relates
// the modes: a model's slowdown against its solo (serial) run, a run's speedup over the serial run.
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "study/concurrency.h"
#include "study/job.h"
#include "study/sweep/journal.h"
#include "study/modes/mode.h"
#include "study/report/report.h"

namespace mf {

// What a run has already and where it records what ends.
struct RunRecord {
  // Models that ended in an earlier run of this mode (a resumed run's journal,
  // study/sweep/journal.h), by job index: not trained again, their reports and exit codes taken as
  // they are.
  const std::map<size_t, EndedModel>* ended = nullptr;
  Progress::EndedSink on_ended;  // each model's report as it ends (the journal); none: not recorded
  // The concurrency chosen already, for a run of some of a sweep's models at a time (an MPI rank's
  // shares, study/ranks/run_over_ranks.h), rather than measured again for each; absent: chosen for
  // these jobs.
  std::optional<ConcurrencyChoice> concurrency;
};

// Runs `jobs` in `mode` and measures the run. *exit_code takes the worst of the models' codes.
RunReport run_mode(Mode& mode, const std::vector<Job>& jobs, const RunOptions& options,
                   const std::atomic<bool>& stop, int* exit_code, const RunRecord& record = {});

// --mode auto: what each mode measured in a short calibration on the sweep's own models (its
// start-up, and its samples per second over the span of its training steps), and the wall it
// predicts for the whole sweep: its start-up, plus every model's samples at that rate.
struct Calibration {
  ModeKind mode;
  std::optional<double> startup_s, samples_per_s, predicted_wall_s;  // absent when nothing trained
  // Why its timings cannot be judged, as a run's `unjudged` (study/report/answer.h): "" when they
  // can, so that its samples/s is a quiet machine's.
  std::string unjudged;
};

// Runs each mode on `jobs` with every model capped at `steps` training steps (start-up, barrier
// and all), and returns the calibrations, fastest predicted wall first.
std::vector<Calibration> calibrate(const std::vector<ModeKind>& modes, const std::vector<Job>& jobs,
                                   const RunOptions& options, const std::atomic<bool>& stop,
                                   int64_t steps);

// The jobs of `all_jobs` still to train: those that did not end in the record's earlier run.
std::vector<Job> jobs_to_train(const std::vector<Job>& all_jobs, const RunRecord& record);

// The gpu_note of a run whose backend runs on the CPU: "no GPU sampled: the cpu backend runs on
// the CPU".
std::string no_gpu_note(BackendKind backend);

// What the options make of a run in `mode`: its mode's name, pools_kept, injected_fault and
// sm_partitions.
void note_options(RunReport& run, ModeKind mode, const RunOptions& options);

// A model the run never started, because it was stopped first: status failed, exit code 130.
ModelReport not_started(const Job& job, const RunOptions& options);
// The report of `job` from the record's journal when the model ended in an earlier run, its exit
// code taken into *exit_code; else null (the model is this run's to train).
const ModelReport* ended_before(const Job& job, const RunRecord& record, int* exit_code);

// Fills each model's solo_s and slowdown (train_s / solo_s; a pack member's, its pack's train time
// over the sum of its members' solo_s) and the run's speedup_vs_serial (serial wall / wall) from
// `serial`, the same jobs run in serial mode: each model alone.
void compare_with_serial(RunReport& run, const RunReport& serial);

}  // namespace mf
