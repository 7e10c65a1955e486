#pragma once
// What the machine has for more work now: memory, cores, open files, processes, and free memory on
// its GPUs. Read for the default concurrency of a run (study/concurrency.h), each figure from where
// the kernel or the driver keeps it; none of them is reserved, so each is a snapshot.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mf {

struct MachineResources {
  // The memory that may be taken without swapping: the least of MemAvailable (/proc/meminfo), the
  // room left under the cgroup's memory.max (cgroup v2: a Slurm job's or a container's bound) and
  // MULTIFIT_MEMORY_AVAILABLE, a size the user sets on a shared machine. Bytes; 0 when unknown.
  size_t memory_available_bytes = 0;
  std::string memory_from;  // which of the three it is: "MemAvailable", "cgroup memory.max",
                            // "MULTIFIT_MEMORY_AVAILABLE"
  int cores = 1;            // the CPUs this process may run on (its affinity mask)
  // RLIMIT_NOFILE's soft limit, and the descriptors open now
  size_t open_files_limit = 0, open_files_open = 0;
  // RLIMIT_NPROC's soft limit (every thread of the user counts against it) and the user's threads
  // now; the limit is absent when unlimited.
  std::optional<size_t> tasks_limit;
  size_t tasks_running = 0;
  // Each GPU asked for, once, in their order: its free memory as NVML reads it (total less what
  // every process on it uses), absent when NVML could not read it. NVML needs no CUDA context,
  // which would take hundreds of MiB of the device from this process for the whole run
  // (cudaMemGetInfo would).
  struct DeviceFree {
    int cuda_device = 0;
    std::optional<size_t> free_bytes;
  };
  std::vector<DeviceFree> devices;
};

// This machine's host name (gethostname), "" when it has none: where a model ran, in a sweep over
// several.
std::string host_name();

// The CPUs this process may run on: the count of its affinity mask (sched_getaffinity, which
// taskset, cgroups' cpusets and Slurm's bindings set), at least 1.
int usable_cores();

// MemAvailable from /proc/meminfo, in bytes: what the kernel can give without swapping; 0 when
// unknown.
size_t mem_available_bytes();
size_t mem_total_bytes();  // MemTotal: the machine's memory, in bytes; 0 when unknown

// Reads the machine now; `gpus` are the CUDA ordinals whose free memory is wanted (none: no GPU is
// read, nothing of NVML loaded). Throws UserError when MULTIFIT_MEMORY_AVAILABLE is set but is no
// size with its unit ("8GiB").
MachineResources read_machine_resources(const std::vector<int>& gpus);

}  // namespace mf
