// multifit info: the devices this machine offers, or why there are none.
#include <cstdio>

#include "apps/multifit/commands.h"
#include "nn/cpu_backend.h"
#include "runtime/device.h"

namespace mf {

Command add_info_command(CLI::App& app) {
  app.add_subcommand("info", "List the CUDA devices (name, SMs, memory, compute capability)");
  return [] {
    const DeviceQuery query = query_devices();
    if (query.devices.empty()) std::printf("CUDA devices: none (%s)\n", query.why_none.c_str());
    for (const DeviceInfo& d : query.devices) std::printf("cuda:%d  %s\n", d.index, describe(d).c_str());
    std::printf("cpu     %s\n", CpuBackend().device().c_str());
    return 0;
  };
}

}  // namespace mf
