#include "backends/cuda/cuda_backend.h"
#include "tests/parity/device_under_test.h"

namespace mf::test {

std::unique_ptr<Backend> make_device_under_test(std::string&) {
  return hostexec::make_cuda_backend({});
}

}  // namespace mf::test
