// NvmlMonitor (runtime/nvml_monitor.h): each CUDA device is found in NVML by its PCI bus id, never
// by its ordinal, and every device given is sampled. A fake NVML whose order differs from CUDA's
// checks the mapping; without NVML (no driver on this machine) every device is unavailable and says
// why; with NVML it samples CUDA device 0. summarize() and gpu_notes() are checked on made-up
// values.
#include "runtime/nvml_monitor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "runtime/error.h"
#include "runtime/shared_library.h"
#include "test_support.h"

namespace mf {
namespace {

using test::contains;

// Whether NVML can be loaded here; when not, `why` says why.
bool nvml_loadable(std::string& why) {
  try {
    SharedLibrary("libnvidia-ml.so.1", "the NVML tests");
    return true;
  } catch (const UserError& e) {
    why = e.what();
    return false;
  }
}

// A GPU of the fake NVML: what each reading says, and after how many readings it is lost (-1:
// never).
struct FakeGpu {
  std::string name;
  unsigned utilization_percent = 0;
  size_t used_bytes = 0, total_bytes = 0;
  int pid = 0;
  size_t pid_bytes = 0;
  int lost_after = -1;
  bool no_processes = false;  // NVML's process query fails (some VMs, vGPU, MIG)
};

// What the fake saw, shared with the test (the monitor owns the fake; its thread reads).
struct FakeLog {
  std::mutex mutex;
  std::vector<std::string> opened;   // the bus ids asked for, as given
  std::map<std::string, int> reads;  // per bus id
  int reads_of(const std::string& bus_id) {
    std::lock_guard lock(mutex);
    return reads[bus_id];
  }
};

// NVML with GPUs at NVML's own bus ids, as nvmlPciInfo_t.busId has them; like NVML's, its order
// (the map's) is by bus, not CUDA's. It knows a GPU only by that exact form, so a monitor that
// passed CUDA's form on unconverted, or asked by position, would find the wrong GPU or none.
class FakeNvml final : public GpuSource {
 public:
  FakeNvml(std::map<std::string, FakeGpu> gpus, std::shared_ptr<FakeLog> log)
      : gpus_(std::move(gpus)), log_(log) {}

  int open(const std::string& bus_id, std::string& name) override {
    std::lock_guard lock(log_->mutex);
    log_->opened.push_back(bus_id);
    const auto gpu = gpus_.find(bus_id);
    if (gpu == gpus_.end())
      throw_nvml_error("nvmlDeviceGetHandleByPciBusId_v2", __FILE__, __LINE__, "Not Found");
    name = gpu->second.name;
    open_.push_back(gpu->first);
    return int(open_.size() - 1);
  }

  GpuReading read(int device) override {
    std::lock_guard lock(log_->mutex);
    const std::string& bus_id = open_.at(size_t(device));
    const FakeGpu& gpu = gpus_.at(bus_id);
    int& reads = log_->reads[bus_id];
    if (gpu.lost_after >= 0 && reads >= gpu.lost_after)
      throw_nvml_error("nvmlDeviceGetUtilizationRates", __FILE__, __LINE__, "GPU is lost");
    ++reads;
    GpuReading reading;
    reading.utilization_percent = gpu.utilization_percent;
    reading.used_bytes = gpu.used_bytes;
    reading.total_bytes = gpu.total_bytes;
    if (gpu.no_processes)
      reading.processes_error = "NVML gave no process's memory (Not Supported)";
    else
      reading.process_bytes[gpu.pid] = gpu.pid_bytes;
    return reading;
  }

 private:
  std::map<std::string, FakeGpu> gpus_;
  std::vector<std::string> open_;  // by id
  std::shared_ptr<FakeLog> log_;
};

// NVML's index 0 is the GPU on bus 0x17, index 1 the one on bus 0x65; CUDA's device 0 is on 0x65.
std::map<std::string, FakeGpu> two_gpus() {
  return {{"00000000:17:00.0", {"GPU on 17", 10, 100, 1000, 41, 60}},
          {"00000000:65:00.0", {"GPU on 65", 90, 500, 2000, 42, 300}}};
}

// Waits (up to 10 s) until `done` holds.
template <class Done>
bool eventually(Done done) {
  for (int i = 0; i < 1000 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return done();
}

TEST(NvmlPciBusId, IsNvmlsFormFromCudasAndNvmls) {
  EXPECT_EQ(nvml_pci_bus_id("0000:17:00.0"), "00000000:17:00.0");      // CUDA's: a 4-digit domain
  EXPECT_EQ(nvml_pci_bus_id("00000000:17:00.0"), "00000000:17:00.0");  // NVML's own
  EXPECT_EQ(nvml_pci_bus_id("0000:3b:00.0"), "00000000:3B:00.0");      // either case
  EXPECT_EQ(nvml_pci_bus_id("0000:3B:00.0"), "00000000:3B:00.0");
  EXPECT_EQ(nvml_pci_bus_id("3b:00.0"), "00000000:3B:00.0");     // no domain: 0
  EXPECT_EQ(nvml_pci_bus_id("0000:3b:1f"), "00000000:3B:1F.0");  // no function: 0
  EXPECT_EQ(nvml_pci_bus_id("0001:04:02.1"), "00000001:04:02.1");
  EXPECT_EQ(nvml_pci_bus_id("1:4:2.1"), "00000001:04:02.1");
}

TEST(NvmlPciBusId, MatchesTheSameDeviceOnly) {
  const auto same = [](const std::string& a, const std::string& b) {
    return !nvml_pci_bus_id(a).empty() && nvml_pci_bus_id(a) == nvml_pci_bus_id(b);
  };
  EXPECT_TRUE(same("0000:17:00.0", "00000000:17:00.0"));
  EXPECT_TRUE(same("0000:b3:00.0", "00000000:B3:00.0"));
  EXPECT_FALSE(same("0000:17:00.0", "00000000:18:00.0"));  // another bus
  EXPECT_FALSE(same("0001:17:00.0", "00000000:17:00.0"));  // another domain
  EXPECT_FALSE(same("0000:17:01.0", "00000000:17:00.0"));  // another device
  EXPECT_FALSE(same("0000:17:00.1", "00000000:17:00.0"));  // another function
  // The same digits in other places are another device.
  EXPECT_FALSE(same("0000:00:17.0", "00000000:17:00.0"));
}

TEST(NvmlPciBusId, IsEmptyForWhatIsNoBusId) {
  for (const char* id :
       {"", "17", ":", "0000::00.0", "0000:17:00.", "0000:17:00.8", "0000:17:20.0", "0000:100:00.0",
        "000000000:17:00.0", "0000:17:0g.0", "0:0000:17:00.0", "GPU-1234", " 0000:17:00.0"})
    EXPECT_EQ(nvml_pci_bus_id(id), "") << id;
}

TEST(NvmlMonitor, SummarizesSamples) {
  const GpuSummary none = summarize({});
  EXPECT_EQ(none.samples, 0u);
  EXPECT_EQ(none.mean_utilization_percent, 0);
  EXPECT_EQ(none.max_utilization_percent, 0);
  EXPECT_EQ(none.peak_used_bytes, 0u);

  const GpuSummary summary = summarize({{0.0, 10, 100}, {0.05, 50, 300}, {0.1, 30, 200}});
  EXPECT_EQ(summary.samples, 3u);
  EXPECT_DOUBLE_EQ(summary.mean_utilization_percent, 30);
  EXPECT_DOUBLE_EQ(summary.max_utilization_percent, 50);
  EXPECT_EQ(summary.peak_used_bytes, 300u);
  EXPECT_EQ(summary.first_used_bytes, 100u) << "before what was watched began";
}

TEST(NvmlMonitor, NotesSayWhichDeviceUnlessAllShareOne) {
  GpuSummary a, b, c;
  a.cuda_device = 0;
  b.cuda_device = 2;
  c.cuda_device = 5;
  EXPECT_EQ(gpu_notes({a, b}), "");
  a.why_not = b.why_not = "no NVML";
  EXPECT_EQ(gpu_notes({a, b}), "no NVML");  // said once
  b.why_not = "";
  b.sampling_error = "GPU is lost";
  EXPECT_EQ(gpu_notes({a, b, c}), "cuda device 0: no NVML; cuda device 2: GPU is lost");
}

// CUDA's order is not NVML's: CUDA device 0 is NVML's second GPU, CUDA device 1 its first, and
// CUDA's bus ids are in its own form. Each summary must be of the GPU at its device's bus id.
TEST(NvmlMonitor, FindsEachCudaDeviceByItsBusId) {
  auto log = std::make_shared<FakeLog>();
  NvmlMonitor monitor({{0, "0000:65:00.0", ""}, {1, "0000:17:00.0", ""}},
                      std::make_unique<FakeNvml>(two_gpus(), log), 0.001);
  ASSERT_TRUE(monitor.available()) << monitor.why_not();
  const std::vector<GpuSummary> gpus = monitor.stop();
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].cuda_device, 0);
  EXPECT_EQ(gpus[0].pci_bus_id, "00000000:65:00.0");
  EXPECT_EQ(gpus[0].device, "GPU on 65");
  EXPECT_DOUBLE_EQ(gpus[0].mean_utilization_percent, 90);
  EXPECT_EQ(gpus[0].peak_used_bytes, 500u);
  EXPECT_EQ(gpus[0].total_bytes, 2000u);
  EXPECT_EQ(gpus[0].process_peak_bytes, (std::map<int, size_t>{{42, 300}}));
  EXPECT_EQ(gpus[1].cuda_device, 1);
  EXPECT_EQ(gpus[1].pci_bus_id, "00000000:17:00.0");
  EXPECT_EQ(gpus[1].device, "GPU on 17");
  EXPECT_DOUBLE_EQ(gpus[1].mean_utilization_percent, 10);
  EXPECT_EQ(gpus[1].peak_used_bytes, 100u);
  EXPECT_EQ(gpus[1].process_peak_bytes, (std::map<int, size_t>{{41, 60}}));
  for (const GpuSummary& gpu : gpus) {
    EXPECT_EQ(gpu.why_not, "");
    EXPECT_EQ(gpu.sampling_error, "");
  }
  EXPECT_EQ(log->opened, (std::vector<std::string>{"00000000:65:00.0", "00000000:17:00.0"}));
}

TEST(NvmlMonitor, SamplesEveryDeviceItIsGiven) {
  auto log = std::make_shared<FakeLog>();
  NvmlMonitor monitor({{3, "0000:17:00.0", ""}, {0, "0000:65:00.0", ""}},
                      std::make_unique<FakeNvml>(two_gpus(), log), 0.001);
  ASSERT_TRUE(eventually([&] {
    return log->reads_of("00000000:17:00.0") >= 5 && log->reads_of("00000000:65:00.0") >= 5;
  })) << "both GPUs sampled on the monitor's thread";
  const std::vector<GpuSummary> gpus = monitor.stop();
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_GE(gpus[0].samples, 5u);
  EXPECT_GE(gpus[1].samples, 5u);
  EXPECT_EQ(gpus[0].samples, size_t(log->reads_of("00000000:17:00.0")));
  EXPECT_EQ(gpus[1].samples, size_t(log->reads_of("00000000:65:00.0")));
  const std::vector<GpuSummary> again = monitor.stop();  // the same summaries
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].samples, gpus[0].samples);
  EXPECT_EQ(again[1].device, gpus[1].device);
}

TEST(NvmlMonitor, ADeviceNvmlLacksIsUnavailableAndTheOthersAreSampled) {
  auto log = std::make_shared<FakeLog>();
  NvmlMonitor monitor({{0, "0000:99:00.0", ""},
                       {1, "0000:17:00.0", ""},
                       {2, "", "CUDA has no device 2 (it has 2)"},
                       {4, "bus 17", ""}},
                      std::make_unique<FakeNvml>(two_gpus(), log), 0.001);
  EXPECT_TRUE(monitor.available());
  const std::vector<GpuSummary> gpus = monitor.stop();
  ASSERT_EQ(gpus.size(), 4u);
  EXPECT_TRUE(contains(gpus[0].why_not, "00000000:99:00.0")) << gpus[0].why_not;
  EXPECT_TRUE(contains(gpus[0].why_not, "Not Found")) << gpus[0].why_not;
  EXPECT_EQ(gpus[0].samples, 0u);
  EXPECT_EQ(gpus[0].device, "");
  EXPECT_EQ(gpus[1].why_not, "");
  EXPECT_EQ(gpus[1].device, "GPU on 17");
  EXPECT_GE(gpus[1].samples, 1u);
  EXPECT_EQ(gpus[2].why_not, "CUDA has no device 2 (it has 2)");
  EXPECT_EQ(gpus[2].pci_bus_id, "");
  EXPECT_TRUE(contains(gpus[3].why_not, "not a PCI bus id")) << gpus[3].why_not;
  const std::string notes = gpu_notes(gpus);
  EXPECT_TRUE(contains(notes, "cuda device 0: ")) << notes;
  EXPECT_FALSE(contains(notes, "cuda device 1")) << notes;
  EXPECT_TRUE(contains(notes, "cuda device 2: CUDA has no device 2")) << notes;
}

TEST(NvmlMonitor, ALostDeviceStopsAloneAndSaysWhy) {
  auto log = std::make_shared<FakeLog>();
  std::map<std::string, FakeGpu> gpus = two_gpus();
  gpus["00000000:17:00.0"].lost_after = 3;
  NvmlMonitor monitor({{0, "0000:17:00.0", ""}, {1, "0000:65:00.0", ""}},
                      std::make_unique<FakeNvml>(std::move(gpus), log), 0.001);
  ASSERT_TRUE(eventually([&] { return log->reads_of("00000000:65:00.0") >= 10; }));
  const std::vector<GpuSummary> summaries = monitor.stop();
  EXPECT_EQ(summaries[0].samples, 3u);
  EXPECT_TRUE(contains(summaries[0].sampling_error, "GPU is lost")) << summaries[0].sampling_error;
  EXPECT_EQ(summaries[0].why_not, "");
  EXPECT_GE(summaries[1].samples, 10u);
  EXPECT_EQ(summaries[1].sampling_error, "");
}

// A device whose process query fails keeps being sampled: only its per-process memory is missing,
// and the note says why.
TEST(NvmlMonitor, AFailingProcessQueryDropsThatFigureAlone) {
  auto log = std::make_shared<FakeLog>();
  std::map<std::string, FakeGpu> gpus = two_gpus();
  gpus["00000000:65:00.0"].no_processes = true;
  NvmlMonitor monitor({{0, "0000:65:00.0", ""}}, std::make_unique<FakeNvml>(std::move(gpus), log),
                      0.001);
  ASSERT_TRUE(monitor.available()) << monitor.why_not();
  ASSERT_TRUE(eventually([&] { return log->reads_of("00000000:65:00.0") >= 10; }));
  const std::vector<GpuSummary> summaries = monitor.stop();
  const GpuSummary& gpu = summaries.at(0);
  EXPECT_GE(gpu.samples, 10u);
  EXPECT_EQ(gpu.max_utilization_percent, 90);
  EXPECT_EQ(gpu.peak_used_bytes, 500u);
  EXPECT_TRUE(gpu.process_peak_bytes.empty());
  EXPECT_EQ(gpu.sampling_error, "");
  EXPECT_EQ(gpu.processes_error, "NVML gave no process's memory (Not Supported)");
  EXPECT_EQ(gpu_notes(summaries), gpu.processes_error);
}

TEST(NvmlMonitor, NoDeviceNvmlHasIsUnavailable) {
  auto log = std::make_shared<FakeLog>();
  NvmlMonitor monitor({{0, "0000:99:00.0", ""}}, std::make_unique<FakeNvml>(two_gpus(), log),
                      0.001);
  EXPECT_FALSE(monitor.available());
  EXPECT_TRUE(contains(monitor.why_not(), "Not Found")) << monitor.why_not();
  EXPECT_TRUE(log->reads.empty());
}

TEST(NvmlMonitor, WithoutNvmlEveryDeviceIsUnavailableAndSaysWhy) {
  std::string why;
  if (nvml_loadable(why)) GTEST_SKIP() << "NVML loads on this machine";
  NvmlMonitor monitor({{0, "0000:65:00.0", ""}, {1, "0000:17:00.0", ""}});
  EXPECT_FALSE(monitor.available());
  EXPECT_TRUE(contains(monitor.why_not(), "NVML")) << monitor.why_not();
  EXPECT_TRUE(contains(monitor.why_not(), "libnvidia-ml.so.1")) << monitor.why_not();
  EXPECT_FALSE(contains(monitor.why_not(), "cuda device"))
      << "one reason for all, said once: " << monitor.why_not();
  EXPECT_EQ(monitor.why_not().find('\n'), std::string::npos) << "one line";
  for (int call = 0; call < 2; ++call) {  // stop() may be called again, and the destructor after it
    const std::vector<GpuSummary> gpus = monitor.stop();
    ASSERT_EQ(gpus.size(), 2u);
    for (size_t i = 0; i < gpus.size(); ++i) {
      EXPECT_EQ(gpus[i].cuda_device, int(i));
      EXPECT_TRUE(contains(gpus[i].why_not, "libnvidia-ml.so.1")) << gpus[i].why_not;
      EXPECT_EQ(gpus[i].samples, 0u);
      EXPECT_EQ(gpus[i].device, "");
      EXPECT_EQ(gpus[i].total_bytes, 0u);
      EXPECT_TRUE(gpus[i].process_peak_bytes.empty());
    }
  }
}

TEST(NvmlMonitor, TargetsAreTheDistinctCudaDevicesInOrder) {
  const std::vector<GpuTarget> targets = gpu_targets({1, 0, 1});
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[0].cuda_device, 1);
  EXPECT_EQ(targets[1].cuda_device, 0);
  for (const GpuTarget& target : targets) {
    // no GPU here, or no second one
    if (target.pci_bus_id.empty())
      EXPECT_NE(target.why_none, "");
    else
      EXPECT_NE(nvml_pci_bus_id(target.pci_bus_id), "") << target.pci_bus_id;
  }
}

TEST(NvmlMonitor, WithNvmlSamplesCudaDeviceZero) {
  std::string why;
  if (!nvml_loadable(why)) GTEST_SKIP() << why;
  const std::vector<GpuTarget> targets = gpu_targets({0});
  if (targets.at(0).pci_bus_id.empty()) GTEST_SKIP() << targets[0].why_none;
  NvmlMonitor monitor(targets, 0.01);
  ASSERT_TRUE(monitor.available()) << monitor.why_not();
  const std::vector<GpuSummary> gpus = monitor.stop();  // at least the sample the constructor takes
  ASSERT_EQ(gpus.size(), 1u);
  const GpuSummary& summary = gpus[0];
  EXPECT_EQ(summary.pci_bus_id, nvml_pci_bus_id(targets[0].pci_bus_id));
  EXPECT_GE(summary.samples, 1u);
  EXPECT_NE(summary.device, "");
  EXPECT_GT(summary.total_bytes, 0u);
  EXPECT_LE(summary.peak_used_bytes, summary.total_bytes);
  EXPECT_LE(summary.max_utilization_percent, 100);
  EXPECT_EQ(summary.sampling_error, "");

  // A bus with no GPU is unavailable, with NVML's reason.
  NvmlMonitor missing({{0, "ffff:ff:1f.7", ""}});
  EXPECT_FALSE(missing.available());
  EXPECT_NE(missing.why_not(), "");
}

}  // namespace
}  // namespace mf
