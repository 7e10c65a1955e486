#pragma once
// The CUDA backend the parity tests compare with the CPU backend: host
// execution in one test binary, the GPU in the other.
#include <memory>
#include <string>

#include "backends/backend.h"

namespace mf::test {

// nullptr with `why` set when there is nothing to test here (the test skips and says why).
std::unique_ptr<Backend> make_device_under_test(std::string& why);

}  // namespace mf::test
