#include "backends/cuda/cuda_backend.h"
#include "runtime/device.h"
#include "tests/parity/device_under_test.h"

namespace mf::test {

std::unique_ptr<Backend> make_device_under_test(std::string& why) {
  const DeviceQuery query = query_devices();
  if (query.devices.empty()) {
    why = "no CUDA device (" + query.why_none + "); the kernels ran through host execution instead";
    return nullptr;
  }
  return gpu::make_cuda_backend({});
}

}  // namespace mf::test
