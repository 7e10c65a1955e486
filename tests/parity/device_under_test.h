#pragma once
// The CUDA backend the parity tests compare with the CPU backend: host
// execution in one test binary, the GPU in the other.
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "backends/backend.h"

namespace mf::test {

// nullptr with `why` set when there is nothing to test here (the test skips and says why).
std::unique_ptr<Backend> make_device_under_test(std::string& why);

// A test of the device under test, skipped with the reason where there is none.
class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    device_ = make_device_under_test(why);
    if (!device_) GTEST_SKIP() << why;
  }
  std::unique_ptr<Backend> device_;
};

}  // namespace mf::test
