#pragma once
// How many models of a run train at once: the runner's phases (study/runner.h). Without
// --concurrency, as many as the machine holds, from what each model needs and what the machine has
// now (runtime/machine_resources.h):
//
//   host memory    half of what is available (MemAvailable, the cgroup's room, or
//                  MULTIFIT_MEMORY_AVAILABLE), over what each model holds: in processes mode a
//                  worker's peak, measured by a probe worker (libraries, backend, its own copy of
//                  the data, a few steps), plus kAfterProbeBytes, its training plan and its step
//                  timeline; in one process, each model's plan and timeline plus
//                  kInProcessOverheadBytes, after the data sets that all of them share
//   device memory  processes mode on a GPU: each worker's CUDA context (kContextBytes), plan and
//                  data; in one process, each model's plan after the shared data. Against each
//                  GPU's free memory, the models spread over the GPUs round robin
//   cores          processes mode: kWorkersPerCore workers for each core
//   open files     processes mode: each worker holds 2 pipe ends in the parent
//   processes      processes mode: RLIMIT_NPROC counts every thread; a worker has the probe's
//                  threads and its heartbeat's
//
// A probe is spawned only where the models' most (needs_bound) does not fit: a small sweep, or one
// of models with small caps, starts at once. The in-process modes are bound by memory alone (their
// threads are bounded apart). Serial mode is always 1. --concurrency K runs K as asked, with a
// warning when K is more than the machine holds;
// --concurrency 0 is all of the models at once, as asked, with the same warning.
#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "study/job.h"
#include "study/modes/mode.h"
#include "runtime/machine_resources.h"

namespace mf {

// A model in one process: its backend (a stream and its events, a pinned buffer on a GPU), its
// pool's bookkeeping, its thread, its report. Measured at about 0.1 MiB a model on the CPU backend
// (streams and packed modes, 1024 tiny models: the process's peak over 256 of them, per model); a
// CUDA backend's stream, events and pinned buffer add some. 1 MiB covers both with room.
inline constexpr size_t kInProcessOverheadBytes = size_t(1) << 20;
// What a worker reaches after the probe's few steps: an epoch's end (its parameters read back, its
// line), the test set's evaluation, the allocator's slack. Measured at 0.15 MiB over the probe's
// peak on tiny models (the most of 32 workers' peaks against their probe's); 1 MiB covers it.
inline constexpr size_t kAfterProbeBytes = size_t(1) << 20;
// A model's step timeline, which a run records (the overlap, --trace): 16 bytes a step, the
// vector's growth, and in processes mode its report's form on the pipe. Measured at 48 bytes a step
// (a worker's peak over 250080 steps less its peak over 1563, per step); 64 covers it.
inline constexpr size_t kTimelineBytesPerStep = 64;
// A worker's CUDA context on its GPU: nvidia-smi shows about 300 to 500 MiB per process on recent
// GPUs with lazy module loading (CUDA 12.2 and later by default); the high end is taken. Not
// measured here: no GPU was at hand.
inline constexpr size_t kContextBytes = size_t(512) << 20;
// A worker's libraries, backend, threads' stacks and report, besides its pool and data, at most: a
// bound, not a measurement (tiny models' workers peak at about 12 MiB on the CPU backend), so that
// a run it cannot limit needs no probe.
inline constexpr size_t kWorkerBoundBytes = size_t(128) << 20;
// At n runnable workers a core, the kernel's scheduler runs each about once every n times its
// smallest slice (about 3 ms with a few cores): at 64, a worker waits some 0.2 s for its turn, and
// the parent, one of the runnable too, reads their lines as late. More than that gains nothing, as
// the cores are the bound either way, and makes every line of the exchange lag by seconds.
inline constexpr size_t kWorkersPerCore = 64;
inline constexpr size_t kPipeEndsPerWorker = 2;  // its stdin's and its stdout's, held by the parent
inline constexpr size_t kSpareFiles =
    64;  // the parent's own: outputs, libraries, NVML, a spawn's pipes

// What one model of the run takes while it trains: the most that any model of the sweep takes.
struct ModelNeeds {
  size_t host_bytes = 0;    // resident host memory per model (per worker, in processes mode)
  size_t device_bytes = 0;  // per model on its GPU; 0 on a backend without one
  // In one process: held once, however many models run (the data sets on the host, or on each GPU).
  size_t shared_host_bytes = 0, shared_device_bytes = 0;
  size_t threads = 1;  // processes mode: a worker's threads
};

struct ConcurrencyChoice {
  size_t per_phase = 1;  // models at once
  std::string reason;    // why, in one line, for the run's document and the terminal
  std::string warning;   // "" unless --concurrency asked for more than the machine holds
};

// The choice for `models` models in `mode` (spread over `gpus` GPUs, round robin, when
// needs.device_bytes is set), `asked` being --concurrency (absent: the machine's bound). Pure: the
// figures are given, so any machine can be made up.
ConcurrencyChoice decide_concurrency(ModeKind mode, size_t models, std::optional<int> asked,
                                     const ModelNeeds& needs, const MachineResources& machine,
                                     size_t gpus = 1);

// What the models of `jobs` need in `mode`: for each data source, its first model built by a probe
// worker (study/modes/processes/probe.h), which measures the worker and the data's rows; each model
// then adds its own training plan at those rows (its memory cap in reserve mode, or when its data
// could not be read) and its timeline's steps.
ModelNeeds measure_needs(ModeKind mode, const std::vector<Job>& jobs, const RunOptions& options,
                         const std::atomic<bool>& stop);

// The most the models of `jobs` can need, known without a probe: each pool at its cap, each data
// set at data_bytes_bound, a worker at kWorkerBoundBytes besides, a timeline of a step a row.
// nullopt where only a probe tells: a compressed data file, preprocessing's host rows, a worker's
// threads against RLIMIT_NPROC.
std::optional<ModelNeeds> needs_bound(ModeKind mode, const std::vector<Job>& jobs,
                                      const RunOptions& options, const MachineResources& machine);

// The run's choice: the machine read and, unless it cannot matter (serial, one model,
// --concurrency 1), the models' needs: their bound where even it lets every model run as asked,
// else measured. Says on stderr what it chose when the machine's bound
// splits the run into phases, and the warning when there is one, even when quiet: they are what the
// run's figures are of. Throws UserError when MULTIFIT_MEMORY_AVAILABLE is no size (read for any
// run of several models).
ConcurrencyChoice choose_concurrency(ModeKind mode, const std::vector<Job>& jobs,
                                     const RunOptions& options, const std::atomic<bool>& stop);

}  // namespace mf
