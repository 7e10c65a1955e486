#pragma once
// One worker of a run built, trained for a few steps and measured: what a worker process of the run
// costs, for the default concurrency (study/concurrency.h). It is spawned as processes mode spawns
// each model's (parent.cpp), builds the job's model and trains kProbeSteps steps: enough for what
// training takes at its start (BLAS buffers, CUDA graphs) and for its report to be written.
#include <atomic>
#include <cstddef>
#include <optional>

#include "study/job.h"
#include "study/report/report.h"

namespace mf {

inline constexpr int64_t kProbeSteps = 2;

struct WorkerProbe {
  // The worker's peak resident memory (VmHWM): libraries, backend, its copy of the data (and the
  // transient ones of reading it), its model, a few steps and its report. 0 when it never reached
  // the start barrier; its memory there when it died after.
  size_t peak_resident_bytes = 0;
  size_t threads = 0;  // its threads at the start barrier
  // With what it built: data_bytes, train_rows, plan, its pool's memory; or why it failed. Its
  // process_device_bytes (the worker's device memory as NVML saw it, its CUDA context included) is
  // absent here as in every worker's own report: measure_needs (study/concurrency.h) samples NVML
  // while the probe runs and fills it in, for the context's figure (context_of).
  ModelReport report;
  // Where NVML lists no process of this one's PID namespace (a container without the host's), the
  // device's used memory at its most while the probe ran less before it started: the probe's
  // footprint, the probe running alone (another user's allocations in between would count too).
  std::optional<size_t> device_growth_bytes;
};

// Runs the probe of `job` (a job with a spec) under `options`; it ends as every worker does (a
// worker that stalls or dies leaves the report saying why). Where the run holds its workers' MPS
// (worker_mps.h; the runner makes it before it chooses the concurrency) the probe runs under it as
// they will, so that what it measures is a worker's as the run will have it.
// Throws only what processes mode's run would (SystemError when poll fails).
WorkerProbe probe_worker(const Job& job, const RunOptions& options, const std::atomic<bool>& stop);

}  // namespace mf
