#pragma once
// How busy the machine was around a run, so that a run whose timings other work disturbed says so.
// A load average lags (a one-minute average still counts the previous run a minute later), so the
// verdict is measured directly: the CPU time the whole machine spent between two readings
// (/proc/stat) less this process's and its children's (getrusage), over the wall time between them.
#include <optional>
#include <string>

namespace mf {

struct MachineLoad {
  double at_s = 0;             // clock_seconds() when read
  double load_average_1m = 0;  // /proc/loadavg's first figure; 0 when unknown
  // /proc/stat: every CPU's non-idle time since boot, in seconds (10 ms ticks)
  double machine_busy_s = 0;
  double own_cpu_s = 0;  // this process's CPU time and its waited-for children's (getrusage)
  // /proc/pressure/cpu's "some total": seconds in which some task waited for a CPU (PSI, Linux 4.20
  // on); absent where the kernel has none.
  std::optional<double> cpu_waited_s;
};
MachineLoad read_machine_load();

// What other work did between two readings: the cores it kept busy on average (absent under
// kLeastWall_s between them, where the ticks' 10 ms make the figure noise), and the share of the
// time some task waited for a CPU (ours included; absent without PSI).
struct LoadBetween {
  double wall_s = 0;
  std::optional<double> others_busy_cores, cpu_pressure;
};
inline constexpr double kLeastWall_s = 1.0;
// A shorter run's CPU pressure is a verdict from 0.1 s on: below, one daemon's wake-up is a
// quarter.
inline constexpr double kLeastPressureWall_s = 0.1;
LoadBetween load_between(const MachineLoad& before, const MachineLoad& after);

// Why other work disturbed a run's timings, "" when nothing says it did: other processes kept a
// quarter of `cores` (the cores this process may use, at least half a core) busy; or, for a run too
// short to tell that (but of kLeastPressureWall_s or more), tasks waited for a CPU a quarter of the
// time, which counts only when the run's own busy threads stayed within the cores (`within_cores`:
// not processes mode, whose workers may outnumber them).
std::string busy_machine(const LoadBetween& load, int cores, bool within_cores);

}  // namespace mf
