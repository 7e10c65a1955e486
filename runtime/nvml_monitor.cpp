#include "runtime/nvml_monitor.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>

#include "runtime/clock.h"
#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/shared_library.h"

// NVML's types come from nvml.h where the CUDA toolkit has it (its cuda_nvml_dev component).
// Without it, the part multifit uses is declared here as nvml.h (NVML API 13) has it: the entry
// points named by a version suffix keep their types for good, so these match every driver that
// exports them.
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
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pciBusId, nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* infoCount,
                                                     nvmlProcessInfo_t* infos);
}
#endif

namespace mf {
namespace {

// The NVML entry points multifit calls, with the types of nvml.h (the versioned symbols its
// unversioned names map to).
struct NvmlApi {
  SharedLibrary library;
  decltype(&nvmlInit_v2) init = lookup<decltype(init)>(library, "nvmlInit_v2");
  decltype(&nvmlShutdown) shutdown = lookup<decltype(shutdown)>(library, "nvmlShutdown");
  decltype(&nvmlErrorString) error_string =
      lookup<decltype(error_string)>(library, "nvmlErrorString");
  decltype(&nvmlDeviceGetHandleByPciBusId_v2) device_get_handle_by_pci_bus_id =
      lookup<decltype(device_get_handle_by_pci_bus_id)>(library,
                                                        "nvmlDeviceGetHandleByPciBusId_v2");
  decltype(&nvmlDeviceGetName) device_get_name =
      lookup<decltype(device_get_name)>(library, "nvmlDeviceGetName");
  decltype(&nvmlDeviceGetUtilizationRates) device_get_utilization_rates =
      lookup<decltype(device_get_utilization_rates)>(library, "nvmlDeviceGetUtilizationRates");
  decltype(&nvmlDeviceGetMemoryInfo) device_get_memory_info =
      lookup<decltype(device_get_memory_info)>(library, "nvmlDeviceGetMemoryInfo");
  decltype(&nvmlDeviceGetComputeRunningProcesses_v3) device_get_compute_running_processes =
      lookup<decltype(device_get_compute_running_processes)>(
          library, "nvmlDeviceGetComputeRunningProcesses_v3");
};

// Loaded once, at the first monitor; a failed load throws and is tried again by the next one.
const NvmlApi& nvml() {
  static const NvmlApi api{SharedLibrary("libnvidia-ml.so.1", "NVML (GPU utilization and memory)")};
  return api;
}

#define NVML_CHECK(call) MF_NVML_CHECK(call, NVML_SUCCESS, nvml().error_string)

// NVML itself: initialized for the life of the source, devices found by PCI bus id.
class Nvml final : public GpuSource {
 public:
  Nvml() { NVML_CHECK(nvml().init()); }  // a failed load throws UserError, a failed init NvmlError
  ~Nvml() override { nvml().shutdown(); }

  int open(const std::string& nvml_bus_id, std::string& name) override {
    nvmlDevice_t device = nullptr;
    NVML_CHECK(nvml().device_get_handle_by_pci_bus_id(nvml_bus_id.c_str(), &device));
    char text[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    NVML_CHECK(nvml().device_get_name(device, text, sizeof text));
    name = text;
    devices_.push_back(device);
    return int(devices_.size() - 1);
  }

  GpuReading read(int id) override {
    const nvmlDevice_t device = devices_.at(size_t(id));
    nvmlUtilization_t utilization{};
    nvmlMemory_t memory{};
    NVML_CHECK(nvml().device_get_utilization_rates(device, &utilization));
    NVML_CHECK(nvml().device_get_memory_info(device, &memory));
    GpuReading reading;
    reading.utilization_percent = utilization.gpu;
    reading.used_bytes = size_t(memory.used);
    reading.total_bytes = size_t(memory.total);

    // The processes with a CUDA context on the device. NVML fills at most `count` entries; when
    // there are more it says NVML_ERROR_INSUFFICIENT_SIZE and sets `count` to how many: grow and
    // ask again (a few to spare, as more may start in between).
    std::vector<nvmlProcessInfo_t> processes(16);
    unsigned int count = unsigned(processes.size());
    nvmlReturn_t status;
    while ((status = nvml().device_get_compute_running_processes(
                device, &count, processes.data())) == NVML_ERROR_INSUFFICIENT_SIZE) {
      processes.resize(count + 8);
      count = unsigned(processes.size());
    }
    if (status != NVML_SUCCESS) {
      reading.processes_error =
          std::string("NVML gave no process's memory (nvmlDeviceGetComputeRunningProcesses_v3: ") +
          nvml().error_string(status) + ")";
      return reading;
    }
    for (unsigned int i = 0; i < count; ++i) {
      const nvmlProcessInfo_t& process = processes[i];
      if (process.usedGpuMemory == (unsigned long long)NVML_VALUE_NOT_AVAILABLE) continue;
      reading.process_bytes[int(process.pid)] = size_t(process.usedGpuMemory);
    }
    return reading;
  }

 private:
  std::vector<nvmlDevice_t> devices_;  // by id
};

// `text` as one hex number no larger than `max`; false when it is empty, too long or not hex.
bool parse_hex(const std::string& text, unsigned long max, unsigned long& value) {
  if (text.empty() || text.size() > 8) return false;
  value = 0;
  for (const char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    value = value * 16 + unsigned(std::isdigit(static_cast<unsigned char>(c))
                                      ? c - '0'
                                      : std::tolower(c) - 'a' + 10);
  }
  return value <= max;
}

}  // namespace

std::string nvml_pci_bus_id(const std::string& id) {
  // [domain:]bus:device[.function]
  std::vector<std::string> parts;
  for (size_t begin = 0;;) {
    const size_t colon = id.find(':', begin);
    parts.push_back(id.substr(begin, colon - begin));
    if (colon == std::string::npos) break;
    begin = colon + 1;
  }
  if (parts.size() < 2 || parts.size() > 3) return "";
  std::string slot = parts.back(), function = "0";
  if (const size_t dot = slot.find('.'); dot != std::string::npos) {
    function = slot.substr(dot + 1);
    slot.resize(dot);
  }
  unsigned long domain = 0, bus = 0, device = 0, fn = 0;
  if (parts.size() == 3 && !parse_hex(parts[0], 0xffffffff, domain)) return "";
  if (!parse_hex(parts[parts.size() - 2], 0xff, bus) || !parse_hex(slot, 0x1f, device) ||
      !parse_hex(function, 7, fn))
    return "";
  char text[32];
  std::snprintf(text, sizeof text, "%08lX:%02lX:%02lX.%lX", domain, bus, device, fn);
  return text;
}

const std::string& gpu_note(const GpuSummary& gpu) {
  if (!gpu.why_not.empty()) return gpu.why_not;
  return gpu.sampling_error.empty() ? gpu.processes_error : gpu.sampling_error;
}

std::string gpu_notes(const std::vector<GpuSummary>& gpus) {
  if (gpus.empty()) return "";
  const bool all_the_same = std::all_of(gpus.begin(), gpus.end(), [&](const GpuSummary& gpu) {
    return gpu_note(gpu) == gpu_note(gpus.front());
  });
  if (all_the_same) return gpu_note(gpus.front());
  std::string notes;
  for (const GpuSummary& gpu : gpus)
    if (!gpu_note(gpu).empty())
      notes += (notes.empty() ? "" : "; ") +
               ("cuda device " + std::to_string(gpu.cuda_device) + ": ") + gpu_note(gpu);
  return notes;
}

std::vector<GpuTarget> gpu_targets(const std::vector<int>& cuda_devices) {
  const DeviceQuery query = query_devices();
  std::vector<GpuTarget> targets;
  for (const int cuda_device : cuda_devices) {
    if (std::any_of(targets.begin(), targets.end(),
                    [&](const GpuTarget& t) { return t.cuda_device == cuda_device; }))
      continue;
    GpuTarget target{cuda_device, "", ""};
    const auto info = std::find_if(query.devices.begin(), query.devices.end(),
                                   [&](const DeviceInfo& d) { return d.index == cuda_device; });
    if (info == query.devices.end())
      target.why_none = query.devices.empty()
                            ? "no CUDA device: " + query.why_none
                            : "CUDA has no device " + std::to_string(cuda_device) + " (it has " +
                                  std::to_string(query.devices.size()) + ")";
    else if (info->pci_bus_id.empty())
      target.why_none = "CUDA gave no PCI bus id for device " + std::to_string(cuda_device);
    else
      target.pci_bus_id = info->pci_bus_id;
    targets.push_back(std::move(target));
  }
  return targets;
}

GpuSummary summarize(const std::vector<GpuSample>& samples) {
  GpuSummary summary;
  summary.samples = samples.size();
  if (samples.empty()) return summary;
  summary.first_used_bytes = samples.front().used_bytes;
  double sum = 0;
  for (const GpuSample& sample : samples) {
    sum += sample.utilization_percent;
    summary.max_utilization_percent =
        std::max(summary.max_utilization_percent, double(sample.utilization_percent));
    summary.peak_used_bytes = std::max(summary.peak_used_bytes, sample.used_bytes);
  }
  summary.mean_utilization_percent = sum / double(samples.size());
  return summary;
}

NvmlMonitor::NvmlMonitor(std::vector<GpuTarget> targets, double period_s) {
  for (GpuTarget& target : targets) devices_.emplace_back().target = std::move(target);
  try {
    source_ = std::make_unique<Nvml>();
  } catch (const std::exception& e) {  // no NVML (UserError), or one that cannot start (NvmlError)
    for (Device& device : devices_) device.why_not = e.what();
  }
  start(period_s);
}

NvmlMonitor::NvmlMonitor(std::vector<GpuTarget> targets, std::unique_ptr<GpuSource> source,
                         double period_s)
    : source_(std::move(source)) {
  for (GpuTarget& target : targets) devices_.emplace_back().target = std::move(target);
  start(period_s);
}

void NvmlMonitor::start(double period_s) {
  bool any = false;
  for (Device& device : devices_) {
    device.bus_id = nvml_pci_bus_id(device.target.pci_bus_id);
    if (!device.why_not.empty()) continue;  // NVML is unavailable
    if (device.target.pci_bus_id.empty()) {
      device.why_not = device.target.why_none.empty() ? "no PCI bus id" : device.target.why_none;
    } else if (device.bus_id.empty()) {
      device.why_not = "\"" + device.target.pci_bus_id + "\" is not a PCI bus id";
    } else {
      try {
        device.id = source_->open(device.bus_id, device.name);
        sample(device);
        any = true;
      } catch (const std::exception& e) {  // NVML has no such device, or cannot report on it
        device.why_not = "PCI " + device.bus_id + ": " + e.what();
      }
    }
  }
  if (!any) {
    why_not_ = gpu_notes(stop());
    if (why_not_.empty()) why_not_ = "no GPU to sample";
    return;
  }
  try {
    thread_ = std::thread([this, period_s] { run(period_s); });
  } catch (const std::exception& e) {  // each device sampled has its first sample, and no more
    for (Device& device : devices_)
      if (device.why_not.empty())
        device.sampling_error = std::string("the sampling thread did not start: ") + e.what();
  }
}

NvmlMonitor::~NvmlMonitor() { stop(); }  // source_ (NVML's shutdown) goes after the thread

std::vector<GpuSummary> NvmlMonitor::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::vector<GpuSummary> summaries;
  for (const Device& device : devices_) {
    GpuSummary summary;
    if (device.why_not.empty()) {
      summary = summarize(device.samples);
      summary.device = device.name;
      summary.total_bytes = device.total_bytes;
      summary.process_peak_bytes = device.process_peak_bytes;
      summary.sampling_error = device.sampling_error;
      summary.processes_error = device.processes_error;
    }
    summary.cuda_device = device.target.cuda_device;
    summary.pci_bus_id = device.bus_id;
    summary.why_not = device.why_not;
    summaries.push_back(std::move(summary));
  }
  return summaries;
}

void NvmlMonitor::run(double period_s) {
  const std::chrono::duration<double> period(period_s);
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
    lock.unlock();  // stop() must not wait for a sample to finish to be heard
    bool any = false;
    for (Device& device : devices_) {
      if (!device.why_not.empty() || !device.sampling_error.empty()) continue;
      try {
        sample(device);
        any = true;
      } catch (const std::exception& e) {
        // a device lost mid-run, say: the run goes on, unmeasured there
        device.sampling_error = e.what();
      }
    }
    if (!any) return;  // every device has stopped
    lock.lock();
  }
}

void NvmlMonitor::sample(Device& device) {
  const double t_s = clock_seconds();
  const GpuReading reading = source_->read(device.id);
  device.samples.push_back({t_s, reading.utilization_percent, reading.used_bytes});
  device.total_bytes = reading.total_bytes;
  if (device.processes_error.empty()) device.processes_error = reading.processes_error;
  for (const auto& [pid, bytes] : reading.process_bytes) {
    size_t& peak = device.process_peak_bytes[pid];
    peak = std::max(peak, bytes);
  }
}

}  // namespace mf
