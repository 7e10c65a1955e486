// The default concurrency from made-up machines and models (decide_concurrency is pure): each bound
// binds when it is the least, the reason names it and the others, and --concurrency runs as asked,
// with a warning above the bound. Workers on a GPU: their context from constructed probe reports
// (needs_of and context_of are pure), time-slicing without MPS and MPS's clients with it.
#include <gtest/gtest.h>

#include "study/concurrency.h"

namespace mf {
namespace {

constexpr size_t MiB = size_t(1) << 20, GiB = size_t(1) << 30;

// A roomy machine: 64 GiB available, 16 cores, 65536 open files, no process limit, no GPU.
MachineResources roomy() {
  MachineResources m;
  m.memory_available_bytes = 64 * GiB;
  m.memory_from = "MemAvailable";
  m.cores = 16;
  m.open_files_limit = 65536;
  m.open_files_open = 6;
  return m;
}

ModelNeeds worker_of(size_t bytes) {
  ModelNeeds needs;
  needs.host_bytes = bytes;
  needs.threads = 2;
  return needs;
}

TEST(Concurrency, ProcessesAreBoundByHalfTheMemoryAvailable) {
  MachineResources m = roomy();
  m.memory_available_bytes = 200 * MiB;
  m.memory_from = "MULTIFIT_MEMORY_AVAILABLE";
  const ConcurrencyChoice c =
      decide_concurrency(ModeKind::processes, 32, std::nullopt, worker_of(10 * MiB), m);
  EXPECT_EQ(c.per_phase, 10u);
  EXPECT_EQ(c.reason,
            "host memory: 10 workers of about 10.00 MiB fit in half of the 200.00 MiB available "
            "(MULTIFIT_MEMORY_AVAILABLE); cores 1024, open files 32733");
  EXPECT_EQ(c.warning, "");
}

TEST(Concurrency, ProcessesAreBoundByOpenFiles) {
  MachineResources m = roomy();
  m.open_files_limit = 1024;
  m.open_files_open = 20;  // and 64 kept spare: 940 left, 2 a worker
  const ConcurrencyChoice c =
      decide_concurrency(ModeKind::processes, 4096, std::nullopt, worker_of(10 * MiB), m);
  EXPECT_EQ(c.per_phase, 470u);
  EXPECT_TRUE(c.reason.starts_with(
      "open files: 2 pipe ends a worker in the 940 left of RLIMIT_NOFILE's 1024; "))
      << c.reason;
}

TEST(Concurrency, ProcessesAreBoundByCores) {
  MachineResources m = roomy();
  m.cores = 2;
  const ConcurrencyChoice c =
      decide_concurrency(ModeKind::processes, 4096, std::nullopt, worker_of(10 * MiB), m);
  EXPECT_EQ(c.per_phase, 2 * kWorkersPerCore);
  EXPECT_TRUE(c.reason.starts_with(
      "cores: 64 workers for each of 2 cores; host memory 3276, open files 32733"))
      << c.reason;
}

TEST(Concurrency, ProcessesAreBoundByTheThreadsTheUserMayStart) {
  MachineResources m = roomy();
  m.tasks_limit = 1000;
  m.tasks_running = 400;  // 600 left, 2 threads a worker
  const ConcurrencyChoice c =
      decide_concurrency(ModeKind::processes, 4096, std::nullopt, worker_of(10 * MiB), m);
  EXPECT_EQ(c.per_phase, 300u);
  EXPECT_TRUE(
      c.reason.starts_with("processes: 2 threads a worker in the 600 left of RLIMIT_NPROC's 1000"))
      << c.reason;
}

// Models spread round robin over the GPUs: each GPU holds its share, the least free one bounding
// all.
TEST(Concurrency, WorkersOnGpusAreBoundByTheLeastFreeOne) {
  MachineResources m = roomy();
  m.devices = {{0, 20 * GiB}, {1, 8 * GiB}};
  ModelNeeds needs = worker_of(10 * MiB);
  needs.device_bytes = 1 * GiB;  // a context, its plan and its data
  const ConcurrencyChoice c =
      decide_concurrency(ModeKind::processes, 4096, std::nullopt, needs, m, 2);
  EXPECT_EQ(c.per_phase, 16u);
  EXPECT_TRUE(c.reason.starts_with(
      "device memory: 8 workers of about 1.00 GiB fit in the 8.00 GiB free on GPU 1, on "
      "each of 2 GPUs"))
      << c.reason;
  // A GPU NVML could not read bounds nothing.
  m.devices = {{0, std::nullopt}};
  EXPECT_EQ(decide_concurrency(ModeKind::processes, 4096, std::nullopt, needs, m).per_phase,
            16 * kWorkersPerCore);
}

// In one process the data is held once, the models' plans each; neither cores nor files bound them.
TEST(Concurrency, InProcessModesAreBoundByMemoryAlone) {
  MachineResources m = roomy();
  m.memory_available_bytes = 400 * MiB;
  m.cores = 1;
  m.open_files_limit = 16;
  ModelNeeds needs;
  needs.host_bytes = 2 * MiB;
  needs.shared_host_bytes = 100 * MiB;
  for (const ModeKind mode : {ModeKind::streams, ModeKind::packed}) {
    const ConcurrencyChoice c = decide_concurrency(mode, 4096, std::nullopt, needs, m);
    EXPECT_EQ(c.per_phase, 50u);
    EXPECT_EQ(c.reason,
              "host memory: 50 models of about 2.00 MiB fit in half of the 400.00 MiB available "
              "(MemAvailable), after "
              "their data's 100.00 MiB");
  }
}

TEST(Concurrency, AllModelsWhenTheMachineHoldsThem) {
  const ConcurrencyChoice c =
      decide_concurrency(ModeKind::processes, 32, std::nullopt, worker_of(10 * MiB), roomy());
  EXPECT_EQ(c.per_phase, 32u);
  EXPECT_EQ(c.reason, "all 32 models fit: host memory 3276, cores 1024, open files 32733");
}

// A model larger than the memory still runs, alone: its own memory errors say the rest.
TEST(Concurrency, OneModelAtLeast) {
  MachineResources m = roomy();
  m.memory_available_bytes = 100 * MiB;
  const ConcurrencyChoice none_fit =
      decide_concurrency(ModeKind::processes, 8, std::nullopt, worker_of(1 * GiB), m);
  EXPECT_EQ(none_fit.per_phase, 1u);
  EXPECT_EQ(none_fit.warning,
            "not even one model fits by host memory (0 workers of about 1.00 GiB fit in half of "
            "the 100.00 MiB available (MemAvailable)); running one at a time");
  EXPECT_EQ(decide_concurrency(ModeKind::serial, 8, std::nullopt, worker_of(1), roomy()).per_phase,
            1u);
  EXPECT_EQ(decide_concurrency(ModeKind::serial, 8, 4, worker_of(1), roomy()).reason,
            "serial: one model at a time");
  EXPECT_EQ(decide_concurrency(ModeKind::streams, 1, std::nullopt, worker_of(1), roomy()).reason,
            "one model");
}

TEST(Concurrency, AnExplicitValueRunsAsAskedWithAWarningAboveTheBound) {
  MachineResources m = roomy();
  m.memory_available_bytes = 2 * 96 * 45 * MiB;
  const ModelNeeds needs = worker_of(45 * MiB);
  const ConcurrencyChoice over = decide_concurrency(ModeKind::processes, 4096, 4096, needs, m);
  EXPECT_EQ(over.per_phase, 4096u);
  EXPECT_EQ(
      over.warning,
      "--concurrency 4096 is above the 96 this machine can hold (host memory); running as asked");
  EXPECT_TRUE(over.reason.starts_with(
      "--concurrency 4096, as asked, above the 96 the machine holds (host memory: 96 "
      "workers of about 45.00 MiB"))
      << over.reason;
  const ConcurrencyChoice all = decide_concurrency(ModeKind::processes, 4096, 0, needs, m);
  EXPECT_EQ(all.per_phase, 4096u);
  EXPECT_EQ(all.warning,
            "--concurrency 0 (all 4096 models at once) is above the 96 this machine can hold (host "
            "memory); running as "
            "asked");
  const ConcurrencyChoice under = decide_concurrency(ModeKind::processes, 4096, 8, needs, m);
  EXPECT_EQ(under.per_phase, 8u);
  EXPECT_EQ(under.reason, "--concurrency 8, as asked");
  EXPECT_EQ(under.warning, "");
  // More than the models is the models.
  EXPECT_EQ(decide_concurrency(ModeKind::processes, 3, 8, needs, m).per_phase, 3u);
}

// Jobs of the tiny model on `source` with a cap of `cap` bytes.
std::vector<Job> tiny_jobs(size_t count, const std::string& source, size_t cap) {
  ModelSpec spec;
  spec.input = 20;
  spec.fit.epochs = 2;
  spec.memory.limit_bytes = cap;
  std::vector<Job> jobs;
  for (size_t i = 0; i < count; ++i) {
    Job job;
    job.index = i;
    job.name = "m";  // then +=: GCC 12 misreads "m" + a temporary (-Wrestrict)
    job.name += std::to_string(i);
    job.data = source;
    job.spec = spec;
    jobs.push_back(job);
  }
  return jobs;
}

// The bound of what models need, known before anything is built: in one process each pool at its
// cap and the data once; a worker its own data, its pool and kWorkerBoundBytes; with the timeline a
// step a row of each epoch. None where a probe must tell.
TEST(Concurrency, TheModelsMostIsBoundedWithoutAProbe) {
  const std::string source = "synthetic:teacher:rows=1024";  // 1280 rows of 21 floats
  const size_t data = 1280 * 21 * 4, steps = 2 * data / (21 * 4);
  RunOptions options;
  options.timeline = true;
  const std::optional<ModelNeeds> streams =
      needs_bound(ModeKind::streams, tiny_jobs(3, source, 4 * MiB), options, roomy());
  ASSERT_TRUE(streams);
  EXPECT_EQ(streams->shared_host_bytes, data);  // once, however many models
  EXPECT_EQ(streams->host_bytes, kInProcessOverheadBytes + 4 * MiB + steps * kTimelineBytesPerStep);
  const std::optional<ModelNeeds> workers =
      needs_bound(ModeKind::processes, tiny_jobs(3, source, 4 * MiB), options, roomy());
  ASSERT_TRUE(workers);
  EXPECT_EQ(workers->shared_host_bytes, 0u);
  EXPECT_EQ(workers->host_bytes,
            kWorkerBoundBytes + data + 4 * MiB + steps * kTimelineBytesPerStep);

  MachineResources limited = roomy();
  limited.tasks_limit = 4096;  // a worker's threads only a probe counts
  EXPECT_FALSE(needs_bound(ModeKind::processes, tiny_jobs(3, source, 4 * MiB), options, limited));
  EXPECT_TRUE(needs_bound(ModeKind::streams, tiny_jobs(3, source, 4 * MiB), options, limited));
  EXPECT_FALSE(
      needs_bound(ModeKind::streams, tiny_jobs(3, "mnist:/nowhere", 4 * MiB), options, roomy()));
}

// A probe of a worker on a GPU, as measure_needs gives it: NVML saw its process at `device_bytes`
// (none: absent), its model took a pool of 4 MiB and 2 MiB of data, its process peaked at 20 MiB
// on the host, with 3 threads, over 1000 rows.
WorkerProbe probe_seen_at(std::optional<size_t> device_bytes) {
  WorkerProbe probe;
  probe.peak_resident_bytes = 20 * MiB;
  probe.threads = 3;
  probe.report.train_rows = 1000;
  probe.report.data_bytes = 2 * MiB;
  probe.report.memory.reserved_bytes = 4 * MiB;
  probe.report.process_device_bytes = device_bytes;
  return probe;
}

// The workers of cuda models with a reserved pool of 4 MiB (their pool is their cap, whatever the
// rows), on `sources`, one model each.
std::vector<Job> cuda_jobs(const std::vector<std::string>& sources) {
  std::vector<Job> jobs = tiny_jobs(sources.size(), "", 4 * MiB);
  for (size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].data = sources[i];
    jobs[i].spec->memory.mode = PoolMode::reserve;
  }
  return jobs;
}

RunOptions on_cuda() {
  RunOptions options;
  options.backend.kind = BackendKind::cuda;
  return options;
}

// A worker's context is its process's device memory less its pool and data; kContextBytes, said to
// be assumed, where NVML gave no figure or one that cannot hold the model's own allocations.
TEST(Concurrency, AWorkersContextIsItsDeviceMemoryLessItsPoolAndData) {
  const WorkerContext measured = context_of(probe_seen_at(318 * MiB));
  EXPECT_EQ(measured.bytes, 312 * MiB);
  EXPECT_EQ(measured.from, "measured by the probe");
  const WorkerContext none = context_of(probe_seen_at(std::nullopt));
  EXPECT_EQ(none.bytes, kContextBytes);
  EXPECT_EQ(none.from, "assumed: the probe measured none");
  const WorkerContext short_of_its_own = context_of(probe_seen_at(6 * MiB));  // its pool and data
  EXPECT_EQ(short_of_its_own.bytes, kContextBytes);
  EXPECT_EQ(short_of_its_own.from, "assumed: NVML saw the probe at no more than its pool and data");

  // In a container NVML's pids are the host's: the device's growth while the probe ran alone.
  WorkerProbe in_a_container = probe_seen_at(std::nullopt);
  in_a_container.device_growth_bytes = 518 * MiB;
  const WorkerContext grown = context_of(in_a_container);
  EXPECT_EQ(grown.bytes, 512 * MiB);
  EXPECT_NE(grown.from.find("from the device's used memory before and while it ran"),
            std::string::npos)
      << grown.from;
  WorkerProbe both = probe_seen_at(318 * MiB);
  both.device_growth_bytes = 518 * MiB;
  EXPECT_EQ(context_of(both).bytes, 312 * MiB) << "the process's own figure where NVML has it";
}

// Each worker on its GPU: its source's probe's context, its own pool and its data; the run's figure
// is the largest, an assumed one among them where a probe measured none.
TEST(Concurrency, WorkersOnAGpuNeedTheContextTheProbeMeasured) {
  const std::vector<Job> jobs = cuda_jobs({"a", "b"});
  std::map<std::string, WorkerProbe> probes = {{"a", probe_seen_at(318 * MiB)},
                                               {"b", probe_seen_at(218 * MiB)}};
  const ModelNeeds needs = needs_of(ModeKind::processes, jobs, probes, on_cuda());
  EXPECT_EQ(needs.device_bytes, 312 * MiB + 4 * MiB + 2 * MiB);
  EXPECT_EQ(needs.context.bytes, 312 * MiB);
  EXPECT_EQ(needs.context.from, "measured by the probe");
  EXPECT_EQ(needs.host_bytes, 20 * MiB + kAfterProbeBytes);  // the pool is on the GPU
  EXPECT_EQ(needs.threads, 4u);                              // and the heartbeat's

  probes["b"] = probe_seen_at(std::nullopt);  // a probe that failed, or NVML that saw no process
  const ModelNeeds assumed = needs_of(ModeKind::processes, jobs, probes, on_cuda());
  EXPECT_EQ(assumed.device_bytes, kContextBytes + 4 * MiB + 2 * MiB);
  EXPECT_EQ(assumed.context.bytes, kContextBytes);
  EXPECT_EQ(assumed.context.from, "assumed: the probe measured none");
  // A source with no probe at all counts as a failed one: no rows, its pool at its cap, no data.
  const ModelNeeds unprobed = needs_of(ModeKind::processes, cuda_jobs({"c"}), {}, on_cuda());
  EXPECT_EQ(unprobed.device_bytes, kContextBytes + 4 * MiB);
  // No context in one process, nor on the cpu backend.
  EXPECT_EQ(needs_of(ModeKind::streams, jobs, probes, on_cuda()).context.bytes, 0u);
  EXPECT_EQ(needs_of(ModeKind::processes, jobs, probes, RunOptions{}).context.bytes, 0u);
}

// The device bound is of the measured context where the probe measured one, and says so; it says
// the context was assumed where none was measured.
TEST(Concurrency, TheDeviceBoundNamesWhereItsContextCameFrom) {
  MachineResources m = roomy();
  m.devices = {{0, 3 * GiB}};
  const std::vector<Job> jobs = cuda_jobs({"a"});
  const ModelNeeds measured =
      needs_of(ModeKind::processes, jobs, {{"a", probe_seen_at(318 * MiB)}}, on_cuda());
  const ConcurrencyChoice c =
      decide_concurrency(ModeKind::processes, 40, std::nullopt, measured, m, 1, GpuSharing::mps);
  EXPECT_EQ(c.per_phase, 9u);  // 3072 MiB / 318 MiB
  EXPECT_EQ(c.reason,
            "device memory: 9 workers of about 318.00 MiB (each worker's CUDA context 312.00 MiB, "
            "measured by the probe) fit in the 3.00 GiB free on GPU 0; host memory 1560, MPS "
            "clients 48, cores 1024, open files 32733");
  EXPECT_TRUE(c.needs_bind);  // a figure of lesser needs would let more run

  const ModelNeeds assumed =
      needs_of(ModeKind::processes, jobs, {{"a", probe_seen_at(std::nullopt)}}, on_cuda());
  const ConcurrencyChoice a =
      decide_concurrency(ModeKind::processes, 40, std::nullopt, assumed, m, 1, GpuSharing::mps);
  EXPECT_EQ(a.per_phase, 5u);  // 3072 MiB / 518 MiB
  EXPECT_TRUE(a.reason.starts_with(
      "device memory: 5 workers of about 518.00 MiB (each worker's CUDA context 512.00 MiB, "
      "assumed: the probe measured none) fit in the 3.00 GiB free on GPU 0; "))
      << a.reason;
}

// Without MPS the GPU time-slices the workers' contexts: kTimeSlicedWorkersPerGpu a GPU, named
// where it binds, with the device bound and its context among the others. Under MPS it does not
// apply, and the MPS server's clients bound them instead.
TEST(Concurrency, TimeSlicingBoundsWorkersOnAGpuWithoutMps) {
  MachineResources m = roomy();
  m.devices = {{0, 100 * GiB}};
  const ModelNeeds needs =
      needs_of(ModeKind::processes, cuda_jobs({"a"}), {{"a", probe_seen_at(318 * MiB)}}, on_cuda());
  const ConcurrencyChoice sliced = decide_concurrency(ModeKind::processes, 40, std::nullopt, needs,
                                                      m, 1, GpuSharing::time_sliced);
  EXPECT_EQ(sliced.per_phase, kTimeSlicedWorkersPerGpu);
  EXPECT_EQ(sliced.reason,
            "time-slicing: 16 workers a GPU without MPS: the GPU runs one context at a time, and "
            "more would only wait longer for their turns; host memory 1560, device memory 322 "
            "(each worker's CUDA context 312.00 MiB, measured by the probe), cores 1024, open "
            "files 32733");
  EXPECT_FALSE(sliced.needs_bind);  // no figure of the models' needs would change it

  m.devices = {{0, 100 * GiB}, {1, 100 * GiB}};
  const ConcurrencyChoice two = decide_concurrency(ModeKind::processes, 40, std::nullopt, needs, m,
                                                   2, GpuSharing::time_sliced);
  EXPECT_EQ(two.per_phase, 2 * kTimeSlicedWorkersPerGpu);
  EXPECT_TRUE(
      two.reason.starts_with("time-slicing: 16 workers a GPU without MPS, on each of 2 GPUs: "))
      << two.reason;

  const ConcurrencyChoice mps =
      decide_concurrency(ModeKind::processes, 40, std::nullopt, needs, m, 2, GpuSharing::mps);
  EXPECT_EQ(mps.per_phase, 40u);
  EXPECT_EQ(mps.reason,
            "all 40 models fit: host memory 1560, device memory 644 (each worker's CUDA context "
            "312.00 MiB, measured by the probe), MPS clients 96, cores 1024, open files 32733");
  const ConcurrencyChoice clients =
      decide_concurrency(ModeKind::processes, 200, std::nullopt, needs, m, 2, GpuSharing::mps);
  EXPECT_EQ(clients.per_phase, 2 * kMpsClientsPerGpu);
  EXPECT_TRUE(clients.reason.starts_with(
      "MPS clients: 48 workers a GPU under MPS, the most clients its server takes, on each of 2 "
      "GPUs; "))
      << clients.reason;
  // Neither binds the in-process modes, whose models share one context.
  EXPECT_EQ(decide_concurrency(ModeKind::streams, 40, std::nullopt, worker_of(MiB), m, 1,
                               GpuSharing::none)
                .per_phase,
            40u);
}

// Whether the models' needs set the choice short of what was asked: the probe runs only then.
TEST(Concurrency, OnlyABoundOfTheModelsNeedsCallsForAProbe) {
  MachineResources m = roomy();
  m.memory_available_bytes = 200 * MiB;  // 10 workers of 10 MiB
  EXPECT_TRUE(
      decide_concurrency(ModeKind::processes, 32, std::nullopt, worker_of(10 * MiB), m).needs_bind);
  EXPECT_FALSE(
      decide_concurrency(ModeKind::processes, 8, std::nullopt, worker_of(10 * MiB), m).needs_bind);
  m.cores = 0;  // the cores bind, at 0, whatever the models need
  const ConcurrencyChoice cores =
      decide_concurrency(ModeKind::processes, 32, std::nullopt, worker_of(10 * MiB), m);
  EXPECT_TRUE(cores.reason.starts_with("cores: ")) << cores.reason;
  EXPECT_FALSE(cores.needs_bind);
  // Of two equal bounds, the one no need sets binds: a probe could raise only the other.
  m = roomy();
  m.memory_available_bytes = 2 * 64 * 16 * 10 * MiB;  // 1024 workers of 10 MiB, as the cores hold
  const ConcurrencyChoice tie =
      decide_concurrency(ModeKind::processes, 4096, std::nullopt, worker_of(10 * MiB), m);
  EXPECT_EQ(tie.per_phase, 1024u);
  EXPECT_TRUE(tie.reason.starts_with("cores: ")) << tie.reason;
  EXPECT_FALSE(tie.needs_bind);
  // --concurrency: only above a bound of the needs, where the warning could go.
  m.memory_available_bytes = 200 * MiB;
  EXPECT_TRUE(decide_concurrency(ModeKind::processes, 32, 16, worker_of(10 * MiB), m).needs_bind);
  EXPECT_FALSE(decide_concurrency(ModeKind::processes, 32, 8, worker_of(10 * MiB), m).needs_bind);
}

// Without a probe a worker's context on a GPU is taken at its most, kContextBoundBytes, and said
// so.
TEST(Concurrency, WithoutAProbeAWorkersContextIsTakenAtItsMost) {
  const std::string source = "synthetic:teacher:rows=1024";  // 1280 rows of 21 floats
  const size_t data = 1280 * 21 * 4;
  const std::optional<ModelNeeds> workers =
      needs_bound(ModeKind::processes, tiny_jobs(3, source, 4 * MiB), on_cuda(), roomy());
  ASSERT_TRUE(workers);
  EXPECT_EQ(workers->device_bytes, kContextBoundBytes + 4 * MiB + data);
  EXPECT_EQ(workers->context.bytes, kContextBoundBytes);
  EXPECT_EQ(workers->context.from, "taken at its most: no probe ran");
  EXPECT_EQ(workers->host_bytes, kWorkerBoundBytes + data);  // the pool on the GPU
  const std::optional<ModelNeeds> streams =
      needs_bound(ModeKind::streams, tiny_jobs(3, source, 4 * MiB), on_cuda(), roomy());
  ASSERT_TRUE(streams);
  EXPECT_EQ(streams->device_bytes, 4 * MiB);
  EXPECT_EQ(streams->shared_device_bytes, data);
  EXPECT_EQ(streams->context.bytes, 0u);
}

}  // namespace
}  // namespace mf
