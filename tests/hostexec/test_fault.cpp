// Backend::inject_fault (run --inject-fault) makes a real fault. Under host execution the CUDA
// backend's illegal_write kernel (kernels/fault.cu) runs on the host, where its write to address 0
// ends the process as a stray pointer would; on a GPU the same write is cudaErrorIllegalAddress. In
// a death test's own process, since the fault ends whatever process makes it.
#include <gtest/gtest.h>

#include "backends/cuda/cuda_backend.h"
#include "target/target.h"

namespace mf {
namespace {

TEST(InjectFault, TheKernelWritesToAnIllegalAddress) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // host execution's streams have threads
  auto backend = hostexec::make_cuda_backend({});
  EXPECT_DEATH(backend->inject_fault(), "");
}

}  // namespace
}  // namespace mf
