#include "runtime/device.h"

#include "runtime/bytes.h"

#if defined(MF_HAVE_CUDA)
#include <cuda_runtime.h>
#include <dlfcn.h>
#endif

namespace mf {

#if defined(MF_HAVE_CUDA)
namespace {

bool driver_present() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver) dlclose(driver);
  return driver != nullptr;
}

}  // namespace

DeviceQuery query_devices() {
  DeviceQuery query;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    query.why_none = cudaGetErrorString(status);
    // Without a driver at all, CUDA's own words ("driver version is insufficient") suggest an old
    // one.
    if (status == cudaErrorInsufficientDriver && !driver_present())
      query.why_none = "no NVIDIA driver: libcuda.so.1 cannot be loaded";
    cudaGetLastError();  // clear the sticky error so later calls start clean
    return query;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    // The bus id names the same GPU to NVML, which orders devices on its own and ignores
    // CUDA_VISIBLE_DEVICES; CUDA's ordinal `i` already has it applied.
    char bus_id[32] = {};  // "0000:17:00.0" and its terminator, with room to spare
    if (cudaDeviceGetPCIBusId(bus_id, int(sizeof bus_id), i) != cudaSuccess) {
      bus_id[0] = '\0';
      cudaGetLastError();
    }
    query.devices.push_back({i, prop.name, prop.multiProcessorCount, prop.totalGlobalMem,
                             prop.major, prop.minor, bus_id});
  }
  if (query.devices.empty()) query.why_none = "no CUDA device is visible";
  return query;
}
#else
DeviceQuery query_devices() {
  return {
      {},
      "this multifit is built without CUDA (MULTIFIT_CUDA=OFF): rebuild where the CUDA toolkit 13 is installed for --backend cuda"};
}
#endif

std::string describe(const DeviceInfo& d) {
  return d.name + ", " + std::to_string(d.multiprocessors) + " SMs, " +
         format_bytes(d.memory_bytes) + ", sm_" + std::to_string(d.major) + std::to_string(d.minor);
}

}  // namespace mf
