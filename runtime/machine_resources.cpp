#include "runtime/machine_resources.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/bytes.h"
#include "runtime/nvml_monitor.h"

namespace mf {
namespace {

namespace fs = std::filesystem;

// A cgroup v2 file's one number; absent for "max" (no bound) or when it cannot be read.
std::optional<size_t> cgroup_number(const fs::path& file) {
  std::ifstream in(file);
  size_t value = 0;
  if (in >> value) return value;
  return std::nullopt;
}

// Where cgroup v2 is mounted ("/sys/fs/cgroup", or ".../unified" on a hybrid system); "" when it is
// not.
std::string cgroup2_mount() {
  std::ifstream mounts("/proc/self/mountinfo");
  for (std::string line; std::getline(mounts, line);) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line);
    std::string id, parent, device, root, mount;
    fields >> id >> parent >> device >> root >> mount;
    return mount;
  }
  return "";
}

// The room left under memory.max by this process's cgroup and each above it: the least of their
// memory.max less memory.current. Absent when no cgroup v2 bounds the memory.
std::optional<size_t> cgroup_room() {
  const std::string mount = cgroup2_mount();
  if (mount.empty()) return std::nullopt;
  std::ifstream own("/proc/self/cgroup");
  std::string path;
  for (std::string line; std::getline(own, line);)
    if (line.starts_with("0::")) path = line.substr(3);
  if (path.empty()) return std::nullopt;
  std::optional<size_t> room;
  for (fs::path group = fs::path(mount) / fs::path(path).relative_path();;
       group = group.parent_path()) {
    const std::optional<size_t> max = cgroup_number(group / "memory.max");
    const size_t current = cgroup_number(group / "memory.current").value_or(0);
    if (max) room = std::min(room.value_or(SIZE_MAX), *max > current ? *max - current : 0);
    if (group == fs::path(mount) || !group.has_relative_path()) break;
  }
  return room;
}

// The user's threads now, each of which counts against RLIMIT_NPROC: the Threads of every process
// in /proc that the user owns.
size_t user_threads() {
  const uid_t uid = getuid();
  size_t threads = 0;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename();
    struct stat info {};
    if (name.find_first_not_of("0123456789") != std::string::npos ||
        stat(entry.path().c_str(), &info) != 0 || info.st_uid != uid)
      continue;
    std::ifstream status(entry.path() / "status");
    for (std::string key; status >> key;) {
      if (key == "Threads:") {
        size_t n = 0;
        if (status >> n) threads += n;
        break;
      }
      status.ignore(4096, '\n');
    }
  }
  return threads;
}

}  // namespace

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

namespace {
size_t meminfo_bytes(const std::string& field) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  size_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == field) return kib * 1024;
    meminfo.ignore(64, '\n');
  }
  return 0;
}
}  // namespace

size_t mem_available_bytes() { return meminfo_bytes("MemAvailable:"); }
size_t mem_total_bytes() { return meminfo_bytes("MemTotal:"); }

int usable_cores() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  return sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? std::max(CPU_COUNT(&cpus), 1) : 1;
}

MachineResources read_machine_resources(const std::vector<int>& gpus) {
  MachineResources r;
  r.memory_available_bytes = mem_available_bytes();
  r.memory_from = "MemAvailable";
  const auto bound = [&](size_t bytes, const char* from) {
    if (r.memory_available_bytes == 0 || bytes < r.memory_available_bytes) {
      r.memory_available_bytes = bytes;
      r.memory_from = from;
    }
  };
  if (const std::optional<size_t> room = cgroup_room()) bound(*room, "cgroup memory.max");
  if (const char* given = std::getenv("MULTIFIT_MEMORY_AVAILABLE"); given && *given)
    bound(parse_bytes(given, "MULTIFIT_MEMORY_AVAILABLE"), "MULTIFIT_MEMORY_AVAILABLE");

  r.cores = usable_cores();

  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) r.open_files_limit = size_t(limit.rlim_cur);
  std::error_code error;
  for (auto it = fs::directory_iterator("/proc/self/fd", error);
       !error && it != fs::directory_iterator(); it.increment(error))
    ++r.open_files_open;
  // RLIMIT_NPROC does not bind root (CAP_SYS_RESOURCE), nor anyone where it is unlimited.
  if (getrlimit(RLIMIT_NPROC, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && geteuid() != 0) {
    r.tasks_limit = size_t(limit.rlim_cur);
    r.tasks_running = user_threads();
  }

  if (!gpus.empty()) {
    // its first sample is taken at once; no other is wanted
    NvmlMonitor monitor(gpu_targets(gpus), 3600);
    for (const GpuSummary& gpu : monitor.stop()) {
      MachineResources::DeviceFree& device = r.devices.emplace_back();
      device.cuda_device = gpu.cuda_device;
      if (gpu.why_not.empty() && gpu.total_bytes >= gpu.peak_used_bytes)
        device.free_bytes = gpu.total_bytes - gpu.peak_used_bytes;
    }
  }
  return r;
}

}  // namespace mf
