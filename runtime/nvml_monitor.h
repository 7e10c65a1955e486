#pragma once
// GPU utilization and device memory over a run, sampled through NVML on a thread of its own. NVML
// (libnvidia-ml.so.1) comes with the NVIDIA driver: it is loaded at run time, never linked, and a
// machine without it, or a device it cannot report on, gives "n/a" and a reason, never a failure.
//
// NVML numbers the GPUs its own way (by PCI bus) and ignores CUDA_VISIBLE_DEVICES, so a CUDA
// ordinal is no NVML index: each CUDA device is found in NVML by its PCI bus id, which CUDA gives
// with CUDA_VISIBLE_DEVICES applied.
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace mf {

// One sampling tick.
struct GpuSample {
  double t_s;                    // seconds on the steady clock (clock_seconds(), runtime/clock.h)
  unsigned utilization_percent;  // NVML's "gpu" rate: the share of its last sample period (1/6 s to
                                 // 1 s, by product) in which one or more kernels ran on the device
  size_t used_bytes;             // device memory in use, by every process on the device
};

struct GpuSummary {
  int cuda_device = 0;  // the CUDA device it is (an ordinal of this process, as --devices gives it)
  // where NVML found it, in NVML's form ("00000000:17:00.0"); "" when unknown
  std::string pci_bus_id;
  std::string device;  // NVML's name of the device; "" when it was not sampled
  double mean_utilization_percent = 0, max_utilization_percent = 0;
  size_t peak_used_bytes = 0, total_bytes = 0;
  size_t first_used_bytes = 0;  // the first sample's: the device before what it watched began
  // Per process id, the peak device memory NVML saw it use (the CUDA context and library workspaces
  // included). The ids are those of NVML's PID namespace: in a container without the host's, they
  // may not be the processes' own getpid().
  std::map<int, size_t> process_peak_bytes;
  size_t samples = 0;
  std::string why_not;  // why the device was not sampled at all ("" when it was); the rest is empty
  std::string sampling_error;  // why sampling stopped before stop() ("" when it did not); the rest
                               // covers the samples taken until then
  // Why process_peak_bytes is empty or partial: NVML's first failed process query (some VMs, vGPU
  // and MIG refuse it), while utilization and memory went on being sampled; "" when none failed.
  std::string processes_error;
};

// The mean, maximum and peaks of `samples` (the samples, mean/max utilization, peak and first used
// bytes of a GpuSummary; the rest is left empty).
GpuSummary summarize(const std::vector<GpuSample>& samples);

// A device's note: its why_not, or else its sampling_error, or else its processes_error.
const std::string& gpu_note(const GpuSummary& gpu);

// The devices' notes (gpu_note) in one line: the note alone when every
// device has that same one (NVML missing, say), otherwise "cuda device N: note" for each device
// that has one, joined by "; ". "" when none has a note.
std::string gpu_notes(const std::vector<GpuSummary>& gpus);

// A PCI bus id in NVML's form, as nvmlPciInfo_t.busId has it: "domain:bus:device.function" in
// upper-case hex, the domain in 8 digits, bus and device in 2, the function in 1
// ("00000000:17:00.0"). It reads CUDA's form ("0000:17:00.0", a 4-digit domain), NVML's, either
// case, and a missing domain (0) or function (0).
// "" when `id` is no PCI bus id. Two ids name the same device exactly when their forms are equal.
std::string nvml_pci_bus_id(const std::string& id);

// A CUDA device to sample, and where NVML finds it.
struct GpuTarget {
  int cuda_device = 0;     // a CUDA ordinal of this process (CUDA_VISIBLE_DEVICES applied)
  std::string pci_bus_id;  // its PCI bus id as CUDA gives it ("0000:17:00.0"); "" when CUDA did not
  std::string why_none;    // why pci_bus_id is ""
};

// Each distinct device of `cuda_devices` once, in their order, with its PCI bus id from
// query_devices() (runtime/device.h); a device CUDA does not list has none, and says why.
std::vector<GpuTarget> gpu_targets(const std::vector<int>& cuda_devices);

// One reading of a device.
struct GpuReading {
  unsigned utilization_percent = 0;
  size_t used_bytes = 0, total_bytes = 0;
  // per process id with a CUDA context on it, its device memory
  std::map<int, size_t> process_bytes;
  // why process_bytes is empty: the process query failed ("" when it did not)
  std::string processes_error;
};

// What the monitor asks of NVML, apart so that tests can stand in for it.
class GpuSource {
 public:
  virtual ~GpuSource() = default;
  // The device at `nvml_bus_id` (nvml_pci_bus_id's form): an id for read(), and NVML's name of it
  // in `name`. Throws NvmlError (runtime/error.h) when NVML has no such device.
  virtual int open(const std::string& nvml_bus_id, std::string& name) = 0;
  // A reading of a device open() gave. Throws NvmlError when utilization or memory cannot be read;
  // a failed process query is said in the reading's processes_error instead.
  virtual GpuReading read(int device) = 0;
};

class NvmlMonitor {
 public:
  // Loads NVML and starts a thread that samples every device of `targets` every `period_s`, each
  // found by its PCI bus id. The first sample of each is taken here, so a device whose utilization
  // NVML cannot report (a GPU in MIG mode) is unavailable from the start. Never throws: a device
  // NVML cannot give (every device, when NVML is unavailable) is "n/a", with why in its summary.
  explicit NvmlMonitor(std::vector<GpuTarget> targets, double period_s = 0.05);
  // The same over `source` in place of NVML.
  NvmlMonitor(std::vector<GpuTarget> targets, std::unique_ptr<GpuSource> source, double period_s);
  ~NvmlMonitor();  // stops the thread
  NvmlMonitor(const NvmlMonitor&) = delete;
  NvmlMonitor& operator=(const NvmlMonitor&) = delete;

  // Whether some device is sampled; when none is, why_not() says why in one line (gpu_notes()).
  bool available() const { return why_not_.empty(); }
  const std::string& why_not() const { return why_not_; }

  // Stops sampling and summarizes: one summary per target, in their order. Calling it again gives
  // the same.
  std::vector<GpuSummary> stop();

 private:
  struct Device {
    GpuTarget target;
    std::string bus_id;  // NVML's form of target.pci_bus_id
    int id = -1;         // source_'s
    std::string name;
    std::string why_not;  // set by the constructor only
    std::string sampling_error;
    std::string processes_error;  // the first reading's that had one
    std::vector<GpuSample> samples;
    size_t total_bytes = 0;
    std::map<int, size_t> process_peak_bytes;
  };

  void start(double period_s);  // opens every device, takes its first sample, starts the thread
  void sample(Device& device);  // one tick: appends to its samples, raises its peaks; throws on a
                                // failed call
  void run(double period_s);    // the thread: a sample of each device every period_s until stop()

  std::unique_ptr<GpuSource> source_;  // null when NVML could not be loaded
  std::vector<Device> devices_;        // written by the thread, read by stop() after it has joined
  std::string why_not_;                // set by the constructor only

  std::mutex mutex_;
  std::condition_variable wake_;  // stop() wakes the thread from its wait between samples
  bool stopping_ = false;         // guarded by mutex_
  std::thread thread_;
};

}  // namespace mf
