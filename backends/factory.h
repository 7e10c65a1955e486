#pragma once
// --backend auto|cpu|cuda|host-exec, --gemm tiled|cublas and --activations ours|cudnn:
// builds the backend a run asks for.
// host-exec runs the CUDA kernels on the CPU (target/host_exec.h): slow, but it
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
  std::string graphs = "auto";  // training steps as CUDA graphs: on, off, or auto (on a GPU)
  int device = 0;  // the CUDA device (cuda, host-exec)
};

// auto resolved to cuda when a device is listed, else cpu, said in one line on `log`; other names
// unchanged. Queries the devices without creating a context, so that the parent of worker
// processes holds no device memory.
BackendOptions resolve_auto(const BackendOptions& options, std::ostream& log);

// auto picks cuda when a usable device exists, else cpu, and says which in one
// line on `log`. cuda without a device, or cublas, cudnn or graphs on the cpu, is a UserError.
std::unique_ptr<Backend> make_backend(const BackendOptions& options, std::ostream& log);

// The options only the cuda backend has (--gemm cublas, --activations cudnn, --graphs on), asked of
// the cpu backend: a UserError naming the option.
void check_cpu_options(const BackendOptions& options);

// Whether training steps run as CUDA graphs on `backend`: --graphs on where the backend has them
// (the cuda backend; host-exec emulates them, target/host_exec_runtime.h), auto on a GPU only.
bool use_graphs(const BackendOptions& options, const Backend& backend);

}  // namespace mf
