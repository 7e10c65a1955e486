// Denormals are flushed on the thread that builds and runs a CPU backend, and
// only there (kernels/float_mode.h).
#include <gtest/gtest.h>

#include <limits>
#include <thread>

#include "nn/cpu_backend.h"

namespace mf {
namespace {

// A product whose exact result is denormal, and one whose input is; volatile keeps them at run time.
float denormal_result() {
  volatile float tiny = 1e-38f, scale = 1e-3f;
  return tiny * scale;
}
float denormal_input() {
  volatile float denormal = std::numeric_limits<float>::denorm_min(), one = 1.f;
  return denormal * one;
}

TEST(FloatMode, TheCpuBackendsThreadFlushesDenormals) {
  std::thread plain([] {  // a thread that never made a backend computes denormals as IEEE says
    EXPECT_GT(denormal_result(), 0.f);
    EXPECT_GT(denormal_input(), 0.f);
  });
  plain.join();
  std::thread worker([] {
    CpuBackend backend;
    EXPECT_EQ(denormal_result(), 0.f);  // FTZ
    EXPECT_EQ(denormal_input(), 0.f);   // DAZ
  });
  worker.join();
}

}  // namespace
}  // namespace mf
