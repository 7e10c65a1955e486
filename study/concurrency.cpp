#include "study/concurrency.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "data/dataset.h"
#include "nn/fit.h"
#include "runtime/bytes.h"
#include "runtime/mps.h"
#include "runtime/nvml_monitor.h"
#include "study/modes/processes/probe.h"
#include "study/modes/processes/worker_mps.h"
#include "study/report/report.h"
#include "runtime/names.h"

namespace mf {
namespace {

// One thing that bounds the models at once: how many it lets run, its name, and why in words.
struct Bound {
  size_t count;
  std::string name;    // "host memory"
  std::string detail;  // "96 workers of about 45.00 MiB fit in half of the 22.00 GiB available
                       // (MemAvailable)"
  bool from_needs;     // whether the models' needs set it, so that a probe may raise it
  std::string basis;   // what the count rests on, said wherever it is named; "" when nothing
};

size_t room(size_t have, size_t taken) { return have > taken ? have - taken : 0; }

// ", on each of 2 GPUs" for a bound a GPU; "" on one.
std::string on_each(size_t gpus) {
  return gpus > 1 ? ", on each of " + std::to_string(gpus) + " GPUs" : "";
}

// Host memory, and device memory where the models have some on a GPU whose free memory NVML gave.
void memory_bounds(std::vector<Bound>& bounds, const std::string& unit, const ModelNeeds& needs,
                   const MachineResources& machine, size_t gpus) {
  if (machine.memory_available_bytes > 0) {
    const size_t half = machine.memory_available_bytes / 2;
    const size_t n = room(half, needs.shared_host_bytes) / std::max<size_t>(needs.host_bytes, 1);
    bounds.push_back({n, "host memory",
                      std::to_string(n) + unit + " of about " + format_bytes(needs.host_bytes) +
                          " fit in half of the " + format_bytes(machine.memory_available_bytes) +
                          " available (" + machine.memory_from + ")" +
                          (needs.shared_host_bytes
                               ? ", after their data's " + format_bytes(needs.shared_host_bytes)
                               : ""),
                      true, ""});
  }
  if (needs.device_bytes == 0) return;
  std::optional<MachineResources::DeviceFree> least;  // the least free GPU bounds each GPU's share
  for (const MachineResources::DeviceFree& d : machine.devices)
    if (d.free_bytes && (!least || *d.free_bytes < *least->free_bytes)) least = d;
  if (!least) return;
  const size_t each = room(*least->free_bytes, needs.shared_device_bytes) / needs.device_bytes;
  const std::string basis = needs.context.bytes == 0
                                ? ""
                                : "each worker's CUDA context " +
                                      format_bytes(needs.context.bytes) + ", " + needs.context.from;
  bounds.push_back({each * gpus, "device memory",
                    std::to_string(each) + unit + " of about " + format_bytes(needs.device_bytes) +
                        (basis.empty() ? "" : " (" + basis + ")") + " fit in the " +
                        format_bytes(*least->free_bytes) + " free on GPU " +
                        std::to_string(least->cuda_device) + on_each(gpus),
                    true, basis});
}

// What bounds processes mode's workers besides memory: how they share a GPU, cores, open files and
// the threads the user may start.
void worker_bounds(std::vector<Bound>& bounds, const ModelNeeds& needs,
                   const MachineResources& machine, size_t gpus, GpuSharing sharing) {
  if (sharing == GpuSharing::time_sliced)
    bounds.push_back(
        {kTimeSlicedWorkersPerGpu * gpus, "time-slicing",
         std::to_string(kTimeSlicedWorkersPerGpu) + " workers a GPU without MPS" + on_each(gpus) +
             ": the GPU runs one context at a time, and more would only wait longer for their turns",
         false, ""});
  if (sharing == GpuSharing::mps)
    bounds.push_back({kMpsClientsPerGpu * gpus, "MPS clients",
                      std::to_string(kMpsClientsPerGpu) +
                          " workers a GPU under MPS, the most clients its server takes" +
                          on_each(gpus),
                      false, ""});
  bounds.push_back({kWorkersPerCore * size_t(machine.cores), "cores",
                    std::to_string(kWorkersPerCore) + " workers for each of " +
                        std::to_string(machine.cores) + " cores",
                    false, ""});
  const size_t files = room(machine.open_files_limit, machine.open_files_open + kSpareFiles);
  bounds.push_back({files / kPipeEndsPerWorker, "open files",
                    std::to_string(kPipeEndsPerWorker) + " pipe ends a worker in the " +
                        std::to_string(files) + " left of RLIMIT_NOFILE's " +
                        std::to_string(machine.open_files_limit),
                    false, ""});
  if (machine.tasks_limit) {
    const size_t tasks = room(*machine.tasks_limit, machine.tasks_running);
    const size_t threads = std::max<size_t>(needs.threads, 1);
    bounds.push_back({tasks / threads, "processes",
                      std::to_string(threads) + " threads a worker in the " +
                          std::to_string(tasks) + " left of RLIMIT_NPROC's " +
                          std::to_string(*machine.tasks_limit),
                      true, ""});
  }
}

std::vector<Bound> machine_bounds(ModeKind mode, const ModelNeeds& needs,
                                  const MachineResources& machine, size_t gpus,
                                  GpuSharing sharing) {
  const bool processes = mode == ModeKind::processes;
  std::vector<Bound> bounds;
  memory_bounds(bounds, processes ? " workers" : " models", needs, machine, gpus);
  if (processes) worker_bounds(bounds, needs, machine, gpus, sharing);
  return bounds;
}

// "cores 128, open files 9968": each bound by its name and count, and its basis.
std::string listed(const std::vector<Bound>& bounds, const Bound* except) {
  std::vector<std::string> listed;
  for (const Bound& b : bounds)
    if (&b != except)
      listed.push_back(b.name + " " + std::to_string(b.count) +
                       (b.basis.empty() ? "" : " (" + b.basis + ")"));
  return joined(listed);
}

}  // namespace

ConcurrencyChoice decide_concurrency(ModeKind mode, size_t models, std::optional<int> asked,
                                     const ModelNeeds& needs, const MachineResources& machine,
                                     size_t gpus, GpuSharing sharing) {
  if (mode == ModeKind::serial) return {1, "serial: one model at a time", ""};
  if (models <= 1) return {1, "one model", ""};
  const std::vector<Bound> bounds =
      machine_bounds(mode, needs, machine, std::max<size_t>(gpus, 1), sharing);
  // The least; of equal ones, one that no need sets, which a probe could not raise.
  const auto least =
      std::min_element(bounds.begin(), bounds.end(), [](const Bound& a, const Bound& b) {
        return a.count < b.count || (a.count == b.count && !a.from_needs && b.from_needs);
      });
  const Bound* binding = least == bounds.end() ? nullptr : &*least;
  // one model runs whatever
  const size_t holds = binding ? std::max<size_t>(binding->count, 1) : SIZE_MAX;
  const std::string n = std::to_string(models);
  ConcurrencyChoice choice;
  if (!asked) {
    choice.per_phase = std::min(holds, models);
    if (choice.per_phase < models) {
      choice.reason = binding->name + ": " + binding->detail;
      if (const std::string others = listed(bounds, binding); !others.empty())
        choice.reason += "; " + others;
      // one runs all the same: the run may still fit, or each model fails alone
      if (binding->count == 0)
        choice.warning = "not even one model fits by " + binding->name + " (" + binding->detail +
                         "); running one at a time";
    } else {
      choice.reason =
          "all " + n + " models fit" + (bounds.empty() ? "" : ": " + listed(bounds, nullptr));
    }
    choice.needs_bind = choice.per_phase < models && binding->from_needs;
    return choice;
  }
  choice.per_phase = *asked == 0 ? models : std::min<size_t>(size_t(*asked), models);
  const std::string flag = "--concurrency " + std::to_string(*asked);
  choice.reason = flag + (*asked == 0 ? ": all " + n + " models at once" : "") + ", as asked";
  if (choice.per_phase > holds) {
    choice.reason += ", above the " + std::to_string(holds) + " the machine holds (" +
                     binding->name + ": " + binding->detail + ")";
    choice.warning = flag + (*asked == 0 ? " (all " + n + " models at once)" : "") +
                     " is above the " + std::to_string(holds) + " this machine can hold (" +
                     binding->name + "); running as asked";
  }
  choice.needs_bind = choice.per_phase > holds && binding->from_needs;
  return choice;
}

// Where the probe's own process was not in NVML's list (WorkerProbe::device_growth_bytes).
constexpr const char* kByDeviceGrowth =
    "measured by the probe, from the device's used memory before and while it ran (NVML lists no process of this PID namespace)";

WorkerContext context_of(const WorkerProbe& probe) {
  const ModelReport& report = probe.report;
  const bool by_process = report.process_device_bytes.has_value();
  const std::optional<size_t> seen =
      by_process ? report.process_device_bytes : probe.device_growth_bytes;
  if (!seen) return {kContextBytes, "assumed: the probe measured none"};
  const size_t own = report.memory.reserved_bytes + report.data_bytes;
  // NVML's peak under what the model allocated was sampled before the allocations, or not all of
  // them: no figure of the context.
  if (*seen <= own)
    return {kContextBytes, "assumed: NVML saw the probe at no more than its pool and data"};
  return {*seen - own, by_process ? "measured by the probe" : kByDeviceGrowth};
}

namespace {

// One model's part of the run's needs, as measured by a probe or bounded from its spec: its pool,
// its data set's bytes and its step timeline's; in processes mode its worker's host bytes besides
// its pool and timeline, its threads (0: not known) and, on a GPU, its CUDA context.
struct ModelCost {
  size_t pool = 0, data = 0, timeline = 0;
  size_t worker_host = 0;
  size_t worker_threads = 0;
  WorkerContext context;
};

// Takes `cost` into `needs`, the most any model takes: a worker holds its own data set; in one
// process each source's data set is held once (`sources`: those counted), each model its pool and
// overhead.
void take_cost(ModelNeeds& needs, const ModelCost& cost, const std::string& source, bool processes,
               bool gpu, std::set<std::string>& sources) {
  const size_t host_pool = gpu ? 0 : cost.pool;  // a pool lives on the host or on its GPU
  if (processes) {
    needs.host_bytes = std::max(needs.host_bytes, cost.worker_host + host_pool + cost.timeline);
    if (gpu) {
      needs.device_bytes = std::max(needs.device_bytes, cost.context.bytes + cost.pool + cost.data);
      if (cost.context.bytes > needs.context.bytes) needs.context = cost.context;
    }
    needs.threads = std::max(needs.threads, cost.worker_threads);
  } else {
    needs.host_bytes =
        std::max(needs.host_bytes, kInProcessOverheadBytes + host_pool + cost.timeline);
    if (gpu) needs.device_bytes = std::max(needs.device_bytes, cost.pool);
    if (sources.insert(source).second)
      (gpu ? needs.shared_device_bytes : needs.shared_host_bytes) += cost.data;
  }
}

}  // namespace

ModelNeeds needs_of(ModeKind mode, const std::vector<Job>& jobs,
                    const std::map<std::string, WorkerProbe>& probes, const RunOptions& options) {
  const bool processes = mode == ModeKind::processes,
             gpu = options.backend.kind == BackendKind::cuda;
  ModelNeeds needs;
  const WorkerProbe none;            // a source without a probe: as one that failed at its start
  std::set<std::string> data_taken;  // in one process, the sources whose data is counted (once)
  for (const Job& job : jobs) {
    if (!job.spec) continue;
    const auto found = probes.find(job.data);
    const WorkerProbe& probe = found == probes.end() ? none : found->second;
    const ModelSpec& spec = *job.spec;
    const int64_t rows = probe.report.train_rows;
    // The pool takes its plan in grow mode (over its cap, the model fails alone), its cap in
    // reserve.
    const size_t pool = spec.memory.mode == PoolMode::reserve || rows == 0
                            ? spec.memory.limit_bytes
                            : std::min(training_plan(spec, rows).total(), spec.memory.limit_bytes);
    const int64_t batches = rows == 0 ? 0 : (rows + spec.fit.batch_size - 1) / spec.fit.batch_size;
    ModelCost cost;
    cost.pool = pool;
    cost.data = probe.report.data_bytes;
    if (options.timeline) cost.timeline = size_t(batches * spec.fit.epochs) * kTimelineBytesPerStep;
    if (processes) {  // a worker's own, measured, and its heartbeat's thread
      cost.worker_host = probe.peak_resident_bytes + kAfterProbeBytes;
      cost.worker_threads = size_t(probe.threads) + 1;
      if (gpu) cost.context = context_of(probe);
    }
    take_cost(needs, cost, job.data, processes, gpu, data_taken);
  }
  return needs;
}

namespace {

// NVML's sampling period while a probe runs: its context, pool and data are held from its start
// barrier to its end, a few tenths of a second at the least.
constexpr double kProbeSamplePeriodS = 0.01;

// The probe of `job`; with `on_gpu`, its process's device memory as NVML saw it from here
// (report_gpus), which the worker's own report does not carry: only a process outside it reads
// NVML's figure of it (model_worker.cpp leaves it to the run's monitor).
WorkerProbe probe_of(const Job& job, const RunOptions& options, const std::atomic<bool>& stop,
                     bool on_gpu) {
  if (!on_gpu) return probe_worker(job, options, stop);
  NvmlMonitor monitor(gpu_targets({job.device}), kProbeSamplePeriodS);
  WorkerProbe probe = probe_worker(job, options, stop);
  if (probe.report.process_device_bytes) return probe;
  const std::vector<GpuSummary> gpus = monitor.stop();
  RunReport seen;
  seen.models.push_back(std::move(probe.report));
  report_gpus(seen, gpus);
  probe.report = std::move(seen.models.front());
  // NVML's pids are not ours (a container's): the device's growth while the probe ran alone.
  if (!probe.report.process_device_bytes && gpus.size() == 1 && gpus[0].why_not.empty() &&
      gpus[0].samples >= 2 && gpus[0].peak_used_bytes > gpus[0].first_used_bytes)
    probe.device_growth_bytes = gpus[0].peak_used_bytes - gpus[0].first_used_bytes;
  return probe;
}

}  // namespace

ModelNeeds measure_needs(ModeKind mode, const std::vector<Job>& jobs, const RunOptions& options,
                         const std::atomic<bool>& stop) {
  const bool on_gpu = mode == ModeKind::processes && options.backend.kind == BackendKind::cuda;
  std::map<std::string, WorkerProbe> probes;  // by data source: what a worker of each holds
  for (const Job& job : jobs)
    if (job.spec && !probes.contains(job.data))
      probes.emplace(job.data, probe_of(job, options, stop, on_gpu));
  return needs_of(mode, jobs, probes, options);
}

std::optional<ModelNeeds> needs_bound(ModeKind mode, const std::vector<Job>& jobs,
                                      const RunOptions& options, const MachineResources& machine) {
  const bool processes = mode == ModeKind::processes,
             gpu = options.backend.kind == BackendKind::cuda;
  if (processes && machine.tasks_limit) return std::nullopt;
  ModelNeeds needs;
  std::set<std::string> sources;
  for (const Job& job : jobs) {
    if (!job.spec) continue;
    const ModelSpec& spec = *job.spec;
    const std::optional<size_t> data = data_bytes_bound(job.data);
    // a host copy of its rows besides
    if (!data || !spec.preprocessing.empty()) return std::nullopt;
    // Every row is at least its inputs and one label; each epoch's batches at most one a row.
    const size_t rows = *data / (sizeof(float) * size_t(std::max(spec.input, 0) + 1));
    ModelCost cost;
    cost.pool = spec.memory.limit_bytes;
    cost.data = *data;
    if (options.timeline) cost.timeline = rows * size_t(spec.fit.epochs) * kTimelineBytesPerStep;
    cost.worker_host = kWorkerBoundBytes + *data;
    // The context at its most, not at kContextBytes: that figure is assumed, and this bound lets
    // the run skip the probe that would measure it. So the device bound needs the probe only where
    // the workers would not all fit even at kContextBoundBytes, and time-slicing or MPS clients
    // bind first: kTimeSlicedWorkersPerGpu (16) of them fit in 16 GiB and more free a GPU,
    // kMpsClientsPerGpu (48) in 48 GiB and more, besides their pools and data.
    if (processes && gpu) cost.context = {kContextBoundBytes, "taken at its most: no probe ran"};
    take_cost(needs, cost, job.data, processes, gpu, sources);
  }
  return needs;
}

namespace {

// How processes mode's workers will share their GPUs: as the run's WorkerMps gives them MPS, else
// (an MPI rank chooses before its runs hold one) as --mps will: on, a daemon found or started; off,
// none; auto, one running now.
GpuSharing sharing_of(ModeKind mode, const RunOptions& options) {
  if (mode != ModeKind::processes || options.backend.kind != BackendKind::cuda)
    return GpuSharing::none;
  const WorkerMps* workers = WorkerMps::in_use();
  const bool mps = workers ? workers->under_mps()
                           : options.mps == MpsUse::on ||
                                 (options.mps == MpsUse::as_found && mps_daemon_running());
  return mps ? GpuSharing::mps : GpuSharing::time_sliced;
}

}  // namespace

ConcurrencyChoice choose_concurrency(ModeKind mode, const std::vector<Job>& jobs,
                                     const RunOptions& options, const std::atomic<bool>& stop) {
  const bool gpu = options.backend.kind == BackendKind::cuda;
  const std::vector<int> devices = options.devices.empty() ? std::vector<int>{0} : options.devices;
  const size_t gpus = std::set<int>(devices.begin(), devices.end()).size();
  const bool matters = mode != ModeKind::serial && jobs.size() > 1 && options.concurrency != 1;
  // Read for every run of several models, serial too, so that a bad MULTIFIT_MEMORY_AVAILABLE stops
  // --mode all before its first mode rather than after it.
  const MachineResources machine =
      jobs.size() > 1 ? read_machine_resources(matters && gpu ? devices : std::vector<int>{})
                      : MachineResources{};
  const GpuSharing sharing = matters ? sharing_of(mode, options) : GpuSharing::none;
  const std::optional<ModelNeeds> bound =
      matters ? needs_bound(mode, jobs, options, machine) : std::nullopt;
  ConcurrencyChoice choice;
  if (bound)
    choice =
        decide_concurrency(mode, jobs.size(), options.concurrency, *bound, machine, gpus, sharing);
  // The probe is skipped where the models' most does not bind: it could only say the same.
  if (bound && !choice.needs_bind)
    choice.reason += " (at most their caps: no probe needed)";
  else
    choice = decide_concurrency(mode, jobs.size(), options.concurrency,
                                matters ? measure_needs(mode, jobs, options, stop) : ModelNeeds{},
                                machine, gpus, sharing);
  if (!options.concurrency && mode != ModeKind::serial && choice.per_phase < jobs.size())
    std::fprintf(stderr, "multifit: concurrency %zu (%s)\n", choice.per_phase,
                 choice.reason.c_str());
  if (!choice.warning.empty())
    std::fprintf(stderr, "multifit: warning: %s\n", choice.warning.c_str());
  return choice;
}

}  // namespace mf
