// The default concurrency from made-up machines and models (decide_concurrency is pure): each bound
// binds when it is the least, the reason names it and the others, and --concurrency runs as asked,
// with a warning above the bound.
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
    job.name = "m" + std::to_string(i);
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

}  // namespace
}  // namespace mf
