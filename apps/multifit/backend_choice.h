#pragma once
// --backend auto|cpu|cuda|host-exec, --gemm tiled|cublas and --activations ours|cudnn:
// builds the backend a run asks for.
// host-exec runs the CUDA kernels on the CPU (kernels/host_exec.h): slow, but it
// shows the GPU code path working on a machine without a GPU.
#include <iosfwd>
#include <memory>
#include <string>

#include "backends/backend.h"

namespace mf {

struct BackendOptions {
  std::string name = "auto";   // auto, cpu, cuda, host-exec
  std::string gemm = "tiled";  // the CUDA products: tiled (our kernels) or cublas (the reference path)
  std::string activations = "ours";  // activations and softmax: ours or cudnn (the reference path)
  int device = 0;  // the CUDA device (cuda, host-exec)
};

// auto resolved to cuda when a device is listed, else cpu, said in one line on `log`; other names
// unchanged. Queries the devices without creating a context, so that the parent of worker
// processes holds no device memory.
BackendOptions resolve_auto(const BackendOptions& options, std::ostream& log);

// auto picks cuda when a usable device exists, else cpu, and says which in one
// line on `log`. cuda without a device, or cublas on the cpu, is a UserError.
std::unique_ptr<Backend> make_backend(const BackendOptions& options, std::ostream& log);

}  // namespace mf
