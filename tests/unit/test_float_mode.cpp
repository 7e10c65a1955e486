// Denormals are flushed on the thread that builds and runs a CPU backend, and by
// DenormalsFlushedHere while it lives (runtime/float_mode.h).
#include <gtest/gtest.h>

#include <limits>
#include <thread>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "backends/cpu/cpu_backend.h"
#include "runtime/float_mode.h"

namespace mf {
namespace {

// A product whose exact result is denormal, and one whose input is; volatile keeps them at run
// time.
float denormal_result() {
  volatile float tiny = 1e-38f, scale = 1e-3f;
  return tiny * scale;
}
float denormal_input() {
  volatile float denormal = std::numeric_limits<float>::denorm_min(), one = 1.f;
  return denormal * one;
}

// A new thread inherits its creator's modes, so the test starts its thread from IEEE's defaults.
TEST(FloatMode, TheCpuBackendsThreadFlushesDenormals) {
#if defined(__x86_64__)
  std::thread worker([] {
    _mm_setcsr(0x1f80);  // the power-on MXCSR: all exceptions masked, no FTZ, no DAZ
    EXPECT_GT(denormal_result(), 0.f);
    EXPECT_GT(denormal_input(), 0.f);
    CpuBackend backend;
    EXPECT_EQ(denormal_result(), 0.f);  // FTZ
    EXPECT_EQ(denormal_input(), 0.f);   // DAZ
  });
  worker.join();
#else
  GTEST_SKIP() << "the check reads x86's MXCSR";
#endif
}

// serial mode's phase: flushed while the guard lives, IEEE's again after (the reports' arithmetic).
TEST(FloatMode, DenormalsAreFlushedHereOnlyWhileTheGuardLives) {
#if defined(__x86_64__)
  std::thread worker([] {
    _mm_setcsr(0x1f80);
    {
      const DenormalsFlushedHere flushed;
      EXPECT_EQ(denormal_result(), 0.f);
      EXPECT_EQ(denormal_input(), 0.f);
      CpuBackend backend;  // flushes too: the guard still puts back what it found
    }
    EXPECT_GT(denormal_result(), 0.f);
    EXPECT_GT(denormal_input(), 0.f);
    EXPECT_EQ(_mm_getcsr() & ~0x3fu, 0x1f80u);  // the modes as they were (less the status flags)
  });
  worker.join();
#else
  GTEST_SKIP() << "the check reads x86's MXCSR";
#endif
}

}  // namespace
}  // namespace mf
