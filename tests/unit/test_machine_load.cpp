// How busy the machine was around a run (runtime/machine_load.h): other processes' cores from two
// readings of the machine's CPU time and this process's, and the verdict a run on a busy machine
// prints, checked on hand-made readings; then one real reading.
#include <gtest/gtest.h>

#include "runtime/machine_load.h"

namespace mf {
namespace {

MachineLoad reading(double at_s, double machine_busy_s, double own_cpu_s,
                    std::optional<double> waited_s = std::nullopt) {
  MachineLoad load;
  load.at_s = at_s;
  load.machine_busy_s = machine_busy_s;
  load.own_cpu_s = own_cpu_s;
  load.cpu_waited_s = waited_s;
  return load;
}

TEST(MachineLoad, OthersAreTheMachinesCpuTimeLessOursOverTheWall) {
  // 2 s: the machine spent 5 CPU-seconds, this process 3: the others kept one core busy
  const LoadBetween load = load_between(reading(10, 100, 1, 7.0), reading(12, 105, 4, 7.5));
  ASSERT_TRUE(load.others_busy_cores);
  EXPECT_DOUBLE_EQ(*load.others_busy_cores, 1.0);
  EXPECT_DOUBLE_EQ(*load.cpu_pressure, 0.25);  // 0.5 s of 2 with a task waiting
  EXPECT_EQ(busy_machine(load, 2, true), "other processes kept 1.0 of its 2 cores busy");
  EXPECT_EQ(busy_machine(load, 8, true), "") << "a quarter of 8 cores is 2";
}

TEST(MachineLoad, AShortRunIsJudgedByItsCpuPressureWhenItsThreadsFitTheCores) {
  // 0.2 s: two ticks of 10 ms would be a tenth of a core of noise, so no others figure
  const LoadBetween load = load_between(reading(10, 100, 1, 7.0), reading(10.2, 100.3, 1.1, 7.1));
  EXPECT_FALSE(load.others_busy_cores);
  EXPECT_DOUBLE_EQ(*load.cpu_pressure, 0.5);
  EXPECT_EQ(busy_machine(load, 2, true), "tasks waited for a CPU 50% of the run (CPU pressure)");
  EXPECT_EQ(busy_machine(load, 2, false), "")
      << "processes mode's own workers may outnumber the cores";
  const LoadBetween quiet = load_between(reading(10, 100, 1, 7.0), reading(10.2, 100.3, 1.1, 7.01));
  EXPECT_EQ(busy_machine(quiet, 2, true), "");
  const LoadBetween no_psi = load_between(reading(10, 100, 1), reading(10.2, 100.3, 1.1));
  EXPECT_FALSE(no_psi.cpu_pressure);
  EXPECT_EQ(busy_machine(no_psi, 2, true), "");
  // 20 ms: a daemon's 5 ms wake-up is a quarter of it, no verdict
  const LoadBetween brief =
      load_between(reading(10, 100, 1, 7.0), reading(10.02, 100.03, 1.01, 7.005));
  EXPECT_DOUBLE_EQ(*brief.cpu_pressure, 0.25);
  EXPECT_EQ(busy_machine(brief, 2, true), "");
}

TEST(MachineLoad, ReadsThisMachine) {
  const MachineLoad load = read_machine_load();
  EXPECT_GT(load.machine_busy_s, 0) << "/proc/stat";
  EXPECT_GE(load.own_cpu_s, 0);
  EXPECT_GE(load.load_average_1m, 0);
}

}  // namespace
}  // namespace mf
