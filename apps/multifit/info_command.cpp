// multifit info: which build this is, the devices this machine offers, or why there are none, and
// where the libraries loaded at run time come from (or why they cannot be loaded).
#include <cstdio>
#include <functional>
#include <string>

#include "apps/multifit/commands.h"
#include "kernels/libxsmm.h"
#include "kernels/openblas.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cuda/cuda_backend.h"
#include "runtime/build_info.h"
#include "runtime/device.h"
#include "runtime/error.h"

namespace mf {
namespace {

void print_library(const char* name, const std::function<std::string()>& load) {
  try {
    std::printf("%-9s %s\n", (std::string(name) + ":").c_str(), load().c_str());
  } catch (const UserError& e) {
    std::printf("%-9s not loadable: %s\n", (std::string(name) + ":").c_str(), e.what());
  }
}

}  // namespace

Command add_info_command(CLI::App& app) {
  app.add_subcommand(
      "info",
      "List the CUDA devices (name, SMs, memory, compute capability) and the libraries found");
  return [] {
    std::printf("build:   %s\n", describe_build().c_str());
    const DeviceQuery query = query_devices();
    if (query.devices.empty()) std::printf("CUDA devices: none (%s)\n", query.why_none.c_str());
    for (const DeviceInfo& d : query.devices)
      std::printf("cuda:%d  %s\n", d.index, describe(d).c_str());
    std::printf("cpu     %s\n", CpuBackend().device().c_str());
    print_library("OpenBLAS", cpu::openblas_library);
    std::printf("libxsmm:  %s (linked in)\n", cpu::libxsmm_description());
#if defined(MF_HAVE_CUDA)
    print_library("cuBLAS", gpu::cublas_library);
#else
    std::printf("cuBLAS:   not in this build (no CUDA)\n");
#endif
#if defined(MF_HAVE_CUDNN)
    print_library("cuDNN", gpu::cudnn_library);
#else
    std::printf("cuDNN:    not in this build (no cuDNN headers)\n");
#endif
    return 0;
  };
}

}  // namespace mf
