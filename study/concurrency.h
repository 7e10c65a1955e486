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
//   device memory  processes mode on a GPU: each worker's CUDA context (as the probe measured it
//                  through NVML: its process's memory, or in a container whose pids NVML does not
//                  list, the device's growth while it ran; else kContextBytes, assumed), plan and
//                  data; in one process, each
//                  model's plan after the shared data. Against each GPU's free memory, the models
//                  spread over the GPUs round robin
//   time-slicing   processes mode on a GPU without MPS: kTimeSlicedWorkersPerGpu workers a GPU
//   MPS clients    processes mode on a GPU under MPS: kMpsClientsPerGpu workers a GPU
//   cores          processes mode: kWorkersPerCore workers for each core
//   open files     processes mode: each worker holds 2 pipe ends in the parent
//   processes      processes mode: RLIMIT_NPROC counts every thread; a worker has the probe's
//                  threads and its heartbeat's
//
// A probe is spawned only where the models' most (needs_bound) could bind: a small sweep, one of
// models with small caps, or one bound by what no model's needs change (cores, open files,
// time-slicing, MPS clients) starts at once. The in-process modes are bound by memory alone (their
// threads are bounded apart). Serial mode is always 1. --concurrency K runs K as asked, with a
// warning when K is more than the machine holds;
// --concurrency 0 is all of the models at once, as asked, with the same warning.
#include <atomic>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "study/job.h"
#include "study/modes/mode.h"
#include "study/modes/processes/probe.h"
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
// A worker's CUDA context on its GPU where the probe measured none (it failed before its context,
// NVML is missing, or NVML's process ids are another PID namespace's): nvidia-smi shows about 300
// to 500 MiB per process on recent GPUs with lazy module loading (CUDA 12.2 and later by default);
// the high end is taken. Assumed, not measured. Under MPS too: a client's context is smaller (the
// server holds the one shared context's scheduling resources, and a client's own storage shrinks
// with its CUDA_MPS_ACTIVE_THREAD_PERCENTAGE), by how much no document says, so the larger figure
// stands; at kMpsClientsPerGpu clients it asks at most 24 GiB of a GPU.
inline constexpr size_t kContextBytes = size_t(512) << 20;
// The most a worker's CUDA context is taken to need where no probe runs (needs_bound): twice
// kContextBytes. Its largest part is the threads' stack reservation, each SM's most resident
// threads at 1 KiB (cudaLimitStackSize's default): 264 MiB on a GPU of 132 SMs (2048 threads each),
// 296 MiB at 148; the heap (8 MiB), the printf buffer (1 MiB) and the modules loaded as their
// kernels are first launched add tens of MiB. Where the workers would not all fit at this, the
// probe measures.
inline constexpr size_t kContextBoundBytes = 2 * kContextBytes;
// A worker's libraries, backend, threads' stacks and report, besides its pool and data, at most: a
// bound, not a measurement (tiny models' workers peak at about 12 MiB on the CPU backend), so that
// a run it cannot limit needs no probe.
inline constexpr size_t kWorkerBoundBytes = size_t(128) << 20;
// At n runnable workers a core, the kernel's scheduler runs each about once every n times its
// smallest slice (about 3 ms with a few cores): at 64, a worker waits some 0.2 s for its turn, and
// the parent, one of the runnable too, reads their lines as late. More than that gains nothing, as
// the cores are the bound either way, and makes every line of the exchange lag by seconds.
inline constexpr size_t kWorkersPerCore = 64;
// Without MPS a GPU runs one process's context at a time: it gives each context that has work a
// time slice of a few milliseconds (the driver does not document its default; nvidia-smi
// compute-policy --set-timeslice changes it), then switches, saving and restoring the SMs' state.
// N workers that each keep the GPU busy get about 1/N of it and wait N-1 slices for each turn.
// Small models leave the GPU idle through most of a step (launches, the host's part), which a few
// more workers fill; at 16, a worker that has work waits 15 slices, tens of milliseconds, for its
// turn, the time of many of its steps, so the GPU is as full as time-slicing makes it whatever
// their work, and each worker more adds only its context's memory and its switches. A bound from
// the slice, as kWorkersPerCore is from the kernel's; not measured here.
inline constexpr size_t kTimeSlicedWorkersPerGpu = 16;
// Under MPS the workers' kernels run at once through the server, so no slice bounds them; the
// server does: it serves 48 client contexts a GPU up to CUDA 13.0 (60 from 13.1), and a client past
// that fails to make its context. The lower number holds with either driver.
inline constexpr size_t kMpsClientsPerGpu = 48;
inline constexpr size_t kPipeEndsPerWorker = 2;  // its stdin's and its stdout's, held by the parent
// the parent's own: outputs, libraries, NVML, a spawn's pipes
inline constexpr size_t kSpareFiles = 64;

// A worker's CUDA context on its GPU: its bytes, and where the figure comes from, for the reason
// ("measured by the probe", "assumed: the probe measured none").
struct WorkerContext {
  size_t bytes = 0;
  std::string from;
};

// What one model of the run takes while it trains: the most that any model of the sweep takes.
struct ModelNeeds {
  size_t host_bytes = 0;    // resident host memory per model (per worker, in processes mode)
  size_t device_bytes = 0;  // per model on its GPU; 0 on a backend without one
  // In one process: held once, however many models run (the data sets on the host, or on each GPU).
  size_t shared_host_bytes = 0, shared_device_bytes = 0;
  size_t threads = 1;  // processes mode: a worker's threads
  // Processes mode on a GPU: the largest worker's context, which device_bytes includes; bytes 0
  // elsewhere.
  WorkerContext context;
};

// How processes mode's workers share each GPU: as contexts of their own, which the GPU time-slices,
// or as clients of an MPS server, whose kernels run at once (runtime/mps.h); none where no worker
// has a GPU (the other modes, a backend without one).
enum class GpuSharing { none, time_sliced, mps };

struct ConcurrencyChoice {
  size_t per_phase = 1;  // models at once
  std::string reason;    // why, in one line, for the run's document and the terminal
  std::string warning;   // "" unless --concurrency asked for more than the machine holds
  // Whether the models' needs (memory, a worker's threads) bound it short of what was asked (every
  // model, or --concurrency's count): only then could figures of lesser needs change it.
  bool needs_bind = false;
};

// The choice for `models` models in `mode` (spread over `gpus` GPUs, round robin, when
// needs.device_bytes is set, their workers sharing each as `sharing` says), `asked` being
// --concurrency (absent: the machine's bound). Pure: the figures are given, so any machine can be
// made up.
ConcurrencyChoice decide_concurrency(ModeKind mode, size_t models, std::optional<int> asked,
                                     const ModelNeeds& needs, const MachineResources& machine,
                                     size_t gpus = 1, GpuSharing sharing = GpuSharing::none);

// A worker's context from its probe: the process's device memory as NVML saw it
// (report.process_device_bytes) less what its model allocated there (its pool's reserved_bytes and
// its data_bytes), "measured by the probe"; where NVML listed no process of ours, the device's
// growth while the probe ran (device_growth_bytes) less the same, measured so and said so;
// kContextBytes, "assumed", where neither was seen.
WorkerContext context_of(const WorkerProbe& probe);

// What the models of `jobs` need in `mode`, from the probes of their data sources (`probes`, by
// Job::data; a job whose source has none counts as one whose probe failed): each worker's peak,
// threads and context as its source's probe measured them, and each model's own training plan at
// the rows its probe read (its memory cap in reserve mode, or when its data could not be read) and
// its timeline's steps. Pure.
ModelNeeds needs_of(ModeKind mode, const std::vector<Job>& jobs,
                    const std::map<std::string, WorkerProbe>& probes, const RunOptions& options);

// needs_of the probes measure_needs spawns: for each data source, its first model built by a probe
// worker (study/modes/processes/probe.h), on the cuda backend with NVML sampling the worker's
// device memory.
ModelNeeds measure_needs(ModeKind mode, const std::vector<Job>& jobs, const RunOptions& options,
                         const std::atomic<bool>& stop);

// The most the models of `jobs` can need, known without a probe: each pool at its cap, each data
// set at data_bytes_bound, a worker at kWorkerBoundBytes besides and, on a GPU, its context at
// kContextBoundBytes, a timeline of a step a row. nullopt where only a probe tells: a compressed
// data file, preprocessing's host rows, a worker's threads against RLIMIT_NPROC.
std::optional<ModelNeeds> needs_bound(ModeKind mode, const std::vector<Job>& jobs,
                                      const RunOptions& options, const MachineResources& machine);

// The run's choice: the machine read and, unless it cannot matter (serial, one model,
// --concurrency 1), the models' needs: their bound where even it cannot lower what the machine
// holds below what is asked (every model, or --concurrency's), or where what binds is no model's
// need; else measured. Processes mode on a GPU shares it as the run's workers will: under MPS where
// the run's WorkerMps (study/modes/processes/worker_mps.h) puts them, else as --mps says (auto: a
// daemon running now). Says on stderr what it chose when the machine's bound splits the run into
// phases, and the warning when there is one, even when quiet: they are what the run's figures are
// of. Throws UserError when MULTIFIT_MEMORY_AVAILABLE is no size (read for any run of several
// models).
ConcurrencyChoice choose_concurrency(ModeKind mode, const std::vector<Job>& jobs,
                                     const RunOptions& options, const std::atomic<bool>& stop);

}  // namespace mf
