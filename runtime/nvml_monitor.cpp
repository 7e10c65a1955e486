#include "runtime/nvml_monitor.h"

#include <algorithm>
#include <chrono>

#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/shared_library.h"

// NVML's types come from nvml.h where the CUDA toolkit has it (its cuda_nvml_dev component). Without it,
// the part multifit uses is declared here as nvml.h (NVML API 13) has it: the entry points named by a
// version suffix keep their types for good, so these match every driver that exports them.
#if __has_include(<nvml.h>)
#include <nvml.h>
#else
extern "C" {
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_UNKNOWN = 999,  // the largest value: every status NVML returns fits the enum
} nvmlReturn_t;
typedef struct nvmlUtilization_st {
  unsigned int gpu, memory;  // percent
} nvmlUtilization_t;
typedef struct nvmlMemory_st {
  unsigned long long total, free, used;  // bytes
} nvmlMemory_t;
typedef struct nvmlProcessInfo_v2_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes, or NVML_VALUE_NOT_AVAILABLE
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_VALUE_NOT_AVAILABLE (-1)
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char* nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* infoCount,
                                                     nvmlProcessInfo_t* infos);
}
#endif

namespace mf {
namespace {

// The NVML entry points multifit calls, with the types of nvml.h (the versioned symbols its unversioned
// names map to).
struct NvmlApi {
  SharedLibrary library;
  decltype(&nvmlInit_v2) init = lookup<decltype(init)>(library, "nvmlInit_v2");
  decltype(&nvmlShutdown) shutdown = lookup<decltype(shutdown)>(library, "nvmlShutdown");
  decltype(&nvmlErrorString) error_string = lookup<decltype(error_string)>(library, "nvmlErrorString");
  decltype(&nvmlDeviceGetHandleByIndex_v2) device_get_handle_by_index =
      lookup<decltype(device_get_handle_by_index)>(library, "nvmlDeviceGetHandleByIndex_v2");
  decltype(&nvmlDeviceGetName) device_get_name = lookup<decltype(device_get_name)>(library, "nvmlDeviceGetName");
  decltype(&nvmlDeviceGetUtilizationRates) device_get_utilization_rates =
      lookup<decltype(device_get_utilization_rates)>(library, "nvmlDeviceGetUtilizationRates");
  decltype(&nvmlDeviceGetMemoryInfo) device_get_memory_info =
      lookup<decltype(device_get_memory_info)>(library, "nvmlDeviceGetMemoryInfo");
  decltype(&nvmlDeviceGetComputeRunningProcesses_v3) device_get_compute_running_processes =
      lookup<decltype(device_get_compute_running_processes)>(library, "nvmlDeviceGetComputeRunningProcesses_v3");
};

// Loaded once, at the first monitor; a failed load throws and is tried again by the next one.
const NvmlApi& nvml() {
  static const NvmlApi api{SharedLibrary("libnvidia-ml.so.1", "NVML (GPU utilization and memory)")};
  return api;
}

#define NVML_CHECK(call) MF_NVML_CHECK(call, NVML_SUCCESS, nvml().error_string)

}  // namespace

GpuSummary summarize(const std::vector<GpuSample>& samples) {
  GpuSummary summary;
  summary.samples = samples.size();
  if (samples.empty()) return summary;
  double sum = 0;
  for (const GpuSample& sample : samples) {
    sum += sample.utilization_percent;
    summary.max_utilization_percent = std::max(summary.max_utilization_percent, double(sample.utilization_percent));
    summary.peak_used_bytes = std::max(summary.peak_used_bytes, sample.used_bytes);
  }
  summary.mean_utilization_percent = sum / double(samples.size());
  return summary;
}

NvmlMonitor::NvmlMonitor(int device_index, double period_s) {
  try {
    NVML_CHECK(nvml().init());
    initialized_ = true;
    NVML_CHECK(nvml().device_get_handle_by_index(unsigned(device_index), &device_));
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    NVML_CHECK(nvml().device_get_name(device_, name, sizeof name));
    device_name_ = name;
    sample();
    thread_ = std::thread([this, period_s] { run(period_s); });
  } catch (const std::exception& e) {  // a failed load (UserError), call (NvmlError) or thread start
    why_not_ = e.what();
  }
}

NvmlMonitor::~NvmlMonitor() {
  stop();
  if (initialized_) nvml().shutdown();
}

GpuSummary NvmlMonitor::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (!available()) return {};
  GpuSummary summary = summarize(samples_);
  summary.device = device_name_;
  summary.total_bytes = total_bytes_;
  summary.process_peak_bytes = process_peak_bytes_;
  summary.sampling_error = sampling_error_;
  return summary;
}

void NvmlMonitor::run(double period_s) {
  const std::chrono::duration<double> period(period_s);
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
    lock.unlock();  // stop() must not wait for a sample to finish to be heard
    try {
      sample();
    } catch (const std::exception& e) {  // a device lost mid-run, say: the run goes on, unmeasured from here
      sampling_error_ = e.what();
      return;
    }
    lock.lock();
  }
}

void NvmlMonitor::sample() {
  nvmlUtilization_t utilization{};
  nvmlMemory_t memory{};
  NVML_CHECK(nvml().device_get_utilization_rates(device_, &utilization));
  NVML_CHECK(nvml().device_get_memory_info(device_, &memory));
  samples_.push_back({clock_seconds(), utilization.gpu, size_t(memory.used)});
  total_bytes_ = size_t(memory.total);

  // The processes with a CUDA context on the device. NVML fills at most `count` entries; when there are
  // more it says NVML_ERROR_INSUFFICIENT_SIZE and sets `count` to how many: grow and ask again (a few to
  // spare, as more may start in between).
  std::vector<nvmlProcessInfo_t> processes(16);
  unsigned int count = unsigned(processes.size());
  nvmlReturn_t status;
  while ((status = nvml().device_get_compute_running_processes(device_, &count, processes.data())) ==
         NVML_ERROR_INSUFFICIENT_SIZE) {
    processes.resize(count + 8);
    count = unsigned(processes.size());
  }
  if (status != NVML_SUCCESS)
    throw_nvml_error("nvmlDeviceGetComputeRunningProcesses_v3", __FILE__, __LINE__, nvml().error_string(status));
  for (unsigned int i = 0; i < count; ++i) {
    const nvmlProcessInfo_t& process = processes[i];
    if (process.usedGpuMemory == (unsigned long long)NVML_VALUE_NOT_AVAILABLE) continue;
    size_t& peak = process_peak_bytes_[int(process.pid)];
    peak = std::max(peak, size_t(process.usedGpuMemory));
  }
}

}  // namespace mf
