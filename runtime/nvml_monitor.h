#pragma once
// GPU utilization and device memory over a run, sampled through NVML on a thread of its own. NVML
// (libnvidia-ml.so.1) comes with the NVIDIA driver: it is loaded at run time, never linked, and a machine
// without it, or a device it cannot report on, gives "n/a" and a reason, never a failure.
#include <condition_variable>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

struct nvmlDevice_st;  // NVML's device, as nvml.h declares it (nvmlDevice_t is a pointer to it)

namespace mf {

// One sampling tick.
struct GpuSample {
  double t_s;                     // seconds on the steady clock (clock_seconds(), runtime/clock.h)
  unsigned utilization_percent;   // NVML's "gpu" rate: the share of its last sample period (1/6 s to 1 s,
                                  // by product) in which one or more kernels ran on the device
  size_t used_bytes;              // device memory in use, by every process on the device
};

struct GpuSummary {
  std::string device;  // NVML's name of the device
  double mean_utilization_percent = 0, max_utilization_percent = 0;
  size_t peak_used_bytes = 0, total_bytes = 0;
  // Per process id, the peak device memory NVML saw it use (the CUDA context and library workspaces
  // included). The ids are those of NVML's PID namespace: in a container without the host's, they may not
  // be the processes' own getpid().
  std::map<int, size_t> process_peak_bytes;
  size_t samples = 0;
  std::string sampling_error;  // why sampling stopped before stop() ("" when it did not); the rest covers
                               // the samples taken until then
};

// The mean, maximum and peaks of `samples` (the samples, mean/max utilization and peak used bytes of a
// GpuSummary; the rest is left empty).
GpuSummary summarize(const std::vector<GpuSample>& samples);

class NvmlMonitor {
 public:
  // Loads NVML and starts a thread that samples device `device_index` (NVML's index, which orders devices
  // by PCI bus, unlike CUDA's default) every `period_s`. The first sample is taken here, so a device whose
  // utilization NVML cannot report (a GPU in MIG mode) is unavailable from the start. Never throws: when
  // NVML or the device is unavailable, available() is false and why_not() says why in one line.
  explicit NvmlMonitor(int device_index, double period_s = 0.05);
  ~NvmlMonitor();  // stops the thread
  NvmlMonitor(const NvmlMonitor&) = delete;
  NvmlMonitor& operator=(const NvmlMonitor&) = delete;

  bool available() const { return why_not_.empty(); }
  const std::string& why_not() const { return why_not_; }

  // Stops sampling and summarizes; an empty summary when unavailable. Calling it again gives the same summary.
  GpuSummary stop();

 private:
  void sample();  // one tick: appends to samples_, raises process_peak_bytes_; throws NvmlError on a failed call
  void run(double period_s);  // the thread: a sample every period_s until stop()

  std::string why_not_;       // set by the constructor only
  bool initialized_ = false;  // nvmlInit succeeded: the destructor owes NVML an nvmlShutdown
  nvmlDevice_st* device_ = nullptr;
  std::string device_name_;

  // Written by the thread, read by stop() after it has joined.
  std::vector<GpuSample> samples_;
  size_t total_bytes_ = 0;
  std::map<int, size_t> process_peak_bytes_;
  std::string sampling_error_;

  std::mutex mutex_;
  std::condition_variable wake_;  // stop() wakes the thread from its wait between samples
  bool stopping_ = false;         // guarded by mutex_
  std::thread thread_;
};

}  // namespace mf
