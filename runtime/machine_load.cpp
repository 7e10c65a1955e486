#include "runtime/machine_load.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "runtime/clock.h"

namespace mf {
namespace {

double seconds_of(const timeval& t) { return double(t.tv_sec) + 1e-6 * double(t.tv_usec); }

double cpu_seconds(int who) {
  rusage usage{};
  if (getrusage(who, &usage) != 0) return 0;
  return seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
}

// The "cpu" line of /proc/stat: user nice system idle iowait irq softirq steal ..., in clock ticks;
// busy is all but idle and iowait.
double machine_busy_seconds() {
  std::ifstream stat("/proc/stat");
  std::string label;
  stat >> label;
  if (label != "cpu") return 0;
  double busy = 0;
  for (int field = 0; field < 8; ++field) {
    double ticks = 0;
    if (!(stat >> ticks)) break;
    if (field != 3 && field != 4) busy += ticks;
  }
  return busy / double(sysconf(_SC_CLK_TCK));
}

std::optional<double> cpu_waited_seconds() {
  std::ifstream pressure("/proc/pressure/cpu");
  std::string line;
  if (!std::getline(pressure, line) || line.rfind("some ", 0) != 0) return std::nullopt;
  const size_t total = line.find("total=");
  if (total == std::string::npos) return std::nullopt;
  char* end = nullptr;
  const double microseconds = std::strtod(line.c_str() + total + 6, &end);
  if (end == line.c_str() + total + 6) return std::nullopt;
  return 1e-6 * microseconds;
}

}  // namespace

MachineLoad read_machine_load() {
  MachineLoad load;
  std::ifstream("/proc/loadavg") >> load.load_average_1m;
  load.machine_busy_s = machine_busy_seconds();
  load.own_cpu_s = cpu_seconds(RUSAGE_SELF) + cpu_seconds(RUSAGE_CHILDREN);
  load.cpu_waited_s = cpu_waited_seconds();
  load.at_s = clock_seconds();
  return load;
}

LoadBetween load_between(const MachineLoad& before, const MachineLoad& after) {
  LoadBetween between;
  const double wall = between.wall_s = after.at_s - before.at_s;
  if (wall >= kLeastWall_s && before.machine_busy_s > 0 && after.machine_busy_s > 0) {
    const double others =
        (after.machine_busy_s - before.machine_busy_s) - (after.own_cpu_s - before.own_cpu_s);
    between.others_busy_cores = std::max(0.0, others / wall);
  }
  if (wall > 0 && before.cpu_waited_s && after.cpu_waited_s)
    between.cpu_pressure =
        std::clamp((*after.cpu_waited_s - *before.cpu_waited_s) / wall, 0.0, 1.0);
  return between;
}

std::string busy_machine(const LoadBetween& load, int cores, bool within_cores) {
  char text[160] = "";
  if (load.others_busy_cores) {
    if (*load.others_busy_cores >= std::max(0.5, 0.25 * cores))
      std::snprintf(text, sizeof text, "other processes kept %.1f of its %d cores busy",
                    *load.others_busy_cores, cores);
  } else if (within_cores && load.wall_s >= kLeastPressureWall_s && load.cpu_pressure &&
             *load.cpu_pressure >= 0.25) {
    std::snprintf(text, sizeof text, "tasks waited for a CPU %.0f%% of the run (CPU pressure)",
                  100 * *load.cpu_pressure);
  }
  return text;
}

}  // namespace mf
