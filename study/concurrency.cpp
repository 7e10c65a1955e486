#include "study/concurrency.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "data/dataset.h"
#include "nn/fit.h"
#include "runtime/bytes.h"
#include "study/modes/processes/probe.h"

namespace mf {
namespace {

// One thing that bounds the models at once: how many it lets run, its name, and why in words.
struct Bound {
  size_t count;
  std::string name;    // "host memory"
  std::string detail;  // "96 workers of about 45.00 MiB fit in half of the 22.00 GiB available
                       // (MemAvailable)"
};

size_t room(size_t have, size_t taken) { return have > taken ? have - taken : 0; }

std::vector<Bound> machine_bounds(ModeKind mode, const ModelNeeds& needs,
                                  const MachineResources& machine, size_t gpus) {
  const bool processes = mode == ModeKind::processes;
  const std::string unit = processes ? " workers" : " models";
  std::vector<Bound> bounds;
  if (machine.memory_available_bytes > 0) {
    const size_t half = machine.memory_available_bytes / 2;
    const size_t n = room(half, needs.shared_host_bytes) / std::max<size_t>(needs.host_bytes, 1);
    bounds.push_back({n, "host memory",
                      std::to_string(n) + unit + " of about " + format_bytes(needs.host_bytes) +
                          " fit in half of the " + format_bytes(machine.memory_available_bytes) +
                          " available (" + machine.memory_from + ")" +
                          (needs.shared_host_bytes
                               ? ", after their data's " + format_bytes(needs.shared_host_bytes)
                               : "")});
  }
  if (needs.device_bytes > 0) {  // the least free GPU bounds each GPU's share of the models
    std::optional<MachineResources::DeviceFree> least;
    for (const MachineResources::DeviceFree& d : machine.devices)
      if (d.free_bytes && (!least || *d.free_bytes < *least->free_bytes)) least = d;
    if (least) {
      const size_t each = room(*least->free_bytes, needs.shared_device_bytes) / needs.device_bytes;
      bounds.push_back({each * gpus, "device memory",
                        std::to_string(each) + unit + " of about " +
                            format_bytes(needs.device_bytes) + " fit in the " +
                            format_bytes(*least->free_bytes) + " free on GPU " +
                            std::to_string(least->cuda_device) +
                            (gpus > 1 ? ", on each of " + std::to_string(gpus) + " GPUs" : "")});
    }
  }
  if (!processes) return bounds;
  bounds.push_back({kWorkersPerCore * size_t(machine.cores), "cores",
                    std::to_string(kWorkersPerCore) + " workers for each of " +
                        std::to_string(machine.cores) + " cores"});
  const size_t files = room(machine.open_files_limit, machine.open_files_open + kSpareFiles);
  bounds.push_back({files / kPipeEndsPerWorker, "open files",
                    std::to_string(kPipeEndsPerWorker) + " pipe ends a worker in the " +
                        std::to_string(files) + " left of RLIMIT_NOFILE's " +
                        std::to_string(machine.open_files_limit)});
  if (machine.tasks_limit) {
    const size_t tasks = room(*machine.tasks_limit, machine.tasks_running);
    const size_t threads = std::max<size_t>(needs.threads, 1);
    bounds.push_back({tasks / threads, "processes",
                      std::to_string(threads) + " threads a worker in the " +
                          std::to_string(tasks) + " left of RLIMIT_NPROC's " +
                          std::to_string(*machine.tasks_limit)});
  }
  return bounds;
}

// "cores 128, open files 9968": each bound by its name and count.
std::string listed(const std::vector<Bound>& bounds, const Bound* except) {
  std::string text;
  for (const Bound& b : bounds)
    if (&b != except) text += (text.empty() ? "" : ", ") + b.name + " " + std::to_string(b.count);
  return text;
}

}  // namespace

ConcurrencyChoice decide_concurrency(ModeKind mode, size_t models, std::optional<int> asked,
                                     const ModelNeeds& needs, const MachineResources& machine,
                                     size_t gpus) {
  if (mode == ModeKind::serial) return {1, "serial: one model at a time", ""};
  if (models <= 1) return {1, "one model", ""};
  const std::vector<Bound> bounds = machine_bounds(mode, needs, machine, std::max<size_t>(gpus, 1));
  const auto least =
      std::min_element(bounds.begin(), bounds.end(),
                       [](const Bound& a, const Bound& b) { return a.count < b.count; });
  const Bound* binding = least == bounds.end() ? nullptr : &*least;
  const size_t holds =
      binding ? std::max<size_t>(binding->count, 1) : SIZE_MAX;  // one model runs whatever
  const std::string n = std::to_string(models);
  ConcurrencyChoice choice;
  if (!asked) {
    choice.per_phase = std::min(holds, models);
    if (choice.per_phase < models) {
      choice.reason = binding->name + ": " + binding->detail;
      if (const std::string others = listed(bounds, binding); !others.empty())
        choice.reason += "; " + others;
      if (binding->count ==
          0)  // one runs all the same: the run may still fit, or each model fails alone
        choice.warning = "not even one model fits by " + binding->name + " (" + binding->detail +
                         "); running one at a time";
    } else {
      choice.reason =
          "all " + n + " models fit" + (bounds.empty() ? "" : ": " + listed(bounds, nullptr));
    }
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
  return choice;
}

ModelNeeds measure_needs(ModeKind mode, const std::vector<Job>& jobs, const RunOptions& options,
                         const std::atomic<bool>& stop) {
  const bool processes = mode == ModeKind::processes,
             gpu = options.backend.kind == BackendKind::cuda;
  ModelNeeds needs;
  std::map<std::string, WorkerProbe> probes;  // by data source: what a worker of each holds
  for (const Job& job : jobs) {
    if (!job.spec) continue;
    auto [at, first] = probes.try_emplace(job.data);
    if (first) at->second = probe_worker(job, options, stop);
    const WorkerProbe& probe = at->second;
    const ModelSpec& spec = *job.spec;
    const int64_t rows = probe.report.train_rows;
    // The pool takes its plan in grow mode (over its cap, the model fails alone), its cap in
    // reserve.
    const size_t pool = spec.memory.mode == PoolMode::reserve || rows == 0
                            ? spec.memory.limit_bytes
                            : std::min(training_plan(spec, rows).total(), spec.memory.limit_bytes);
    const size_t data = probe.report.data_bytes;
    const int64_t batches = rows == 0 ? 0 : (rows + spec.fit.batch_size - 1) / spec.fit.batch_size;
    const size_t timeline =
        options.timeline ? size_t(batches * spec.fit.epochs) * kTimelineBytesPerStep : 0;
    if (processes) {  // a worker's own, measured; its pool on the host or on its GPU, its timeline
      needs.host_bytes = std::max(needs.host_bytes, probe.peak_resident_bytes + kAfterProbeBytes +
                                                        (gpu ? 0 : pool) + timeline);
      if (gpu) needs.device_bytes = std::max(needs.device_bytes, kContextBytes + pool + data);
      needs.threads = std::max(needs.threads, probe.threads + 1);  // and its heartbeat's
    } else {  // one process: the data sets once, each model its pool and overhead
      needs.host_bytes =
          std::max(needs.host_bytes, kInProcessOverheadBytes + (gpu ? 0 : pool) + timeline);
      if (gpu) needs.device_bytes = std::max(needs.device_bytes, pool);
      if (first) (gpu ? needs.shared_device_bytes : needs.shared_host_bytes) += data;
    }
  }
  return needs;
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
    if (!data || !spec.preprocessing.empty())
      return std::nullopt;  // a host copy of its rows besides
    const size_t pool = spec.memory.limit_bytes;
    // Every row is at least its inputs and one label; each epoch's batches at most one a row.
    const size_t rows = *data / (sizeof(float) * size_t(std::max(spec.input, 0) + 1));
    const size_t timeline =
        options.timeline ? rows * size_t(spec.fit.epochs) * kTimelineBytesPerStep : 0;
    if (processes) {
      needs.host_bytes =
          std::max(needs.host_bytes, kWorkerBoundBytes + *data + (gpu ? 0 : pool) + timeline);
      if (gpu) needs.device_bytes = std::max(needs.device_bytes, kContextBytes + pool + *data);
    } else {
      needs.host_bytes =
          std::max(needs.host_bytes, kInProcessOverheadBytes + (gpu ? 0 : pool) + timeline);
      if (gpu) needs.device_bytes = std::max(needs.device_bytes, pool);
      if (sources.insert(job.data).second)
        (gpu ? needs.shared_device_bytes : needs.shared_host_bytes) += *data;
    }
  }
  return needs;
}

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
  ConcurrencyChoice choice;
  const std::optional<ModelNeeds> bound =
      matters ? needs_bound(mode, jobs, options, machine) : std::nullopt;
  if (bound)
    choice = decide_concurrency(mode, jobs.size(), options.concurrency, *bound, machine, gpus);
  // The probe is skipped where the models' most cannot bind: it could only say the same.
  if (bound && choice.warning.empty() && (options.concurrency || choice.per_phase == jobs.size()))
    choice.reason += " (at most their caps: no probe needed)";
  else
    choice = decide_concurrency(mode, jobs.size(), options.concurrency,
                                matters ? measure_needs(mode, jobs, options, stop) : ModelNeeds{},
                                machine, gpus);
  if (!options.concurrency && mode != ModeKind::serial && choice.per_phase < jobs.size())
    std::fprintf(stderr, "multifit: concurrency %zu (%s)\n", choice.per_phase,
                 choice.reason.c_str());
  if (!choice.warning.empty())
    std::fprintf(stderr, "multifit: warning: %s\n", choice.warning.c_str());
  return choice;
}

}  // namespace mf
