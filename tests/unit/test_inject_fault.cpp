// The cpu backend's fault on purpose (run --inject-fault) ends its process with SIGSEGV, as a stray
// pointer in a CPU kernel would: what streams mode's models share on the CPU is that process.
#include <gtest/gtest.h>

#include <csignal>

#include "backends/cpu/cpu_backend.h"

namespace mf {
namespace {

TEST(InjectFault, TheCpuBackendEndsItsProcessWithSIGSEGV) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(CpuBackend(1).inject_fault(), testing::KilledBySignal(SIGSEGV), "");
}

}  // namespace
}  // namespace mf
