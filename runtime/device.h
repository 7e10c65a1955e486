#pragma once
// Device discovery. No driver, no GPU or a broken install all mean "no device",
// with CUDA's reason, never a crash.
#include <cstddef>
#include <string>
#include <vector>

namespace mf {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int multiprocessors = 0;
  size_t memory_bytes = 0;
  int major = 0, minor = 0;  // compute capability
  // CUDA's "domain:bus:device.function" ("0000:17:00.0"), for NVML to find it by; "" when CUDA
  // could not give it
  std::string pci_bus_id;
};

struct DeviceQuery {
  std::vector<DeviceInfo> devices;
  std::string why_none;  // CUDA's reason when devices is empty
};

DeviceQuery query_devices();
std::string describe(const DeviceInfo& d);  // "NVIDIA H200, 132 SMs, 139.8 GiB, sm_90"

}  // namespace mf
