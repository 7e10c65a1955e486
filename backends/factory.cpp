#include "backends/factory.h"

#include <algorithm>
#include <ostream>
#include <thread>

#include "backends/cpu/cpu_backend.h"
#include "target/target.h"
#include "backends/cuda/cuda_backend.h"
#include "kernels/openblas.h"
#include "runtime/device.h"
#include "runtime/error.h"

namespace mf {
void check_cpu_options(const BackendOptions& options) {
  if (options.gemm != GemmImpl::tiled)
    throw UserError(
        "--gemm cublas: only the cuda backend has a cuBLAS path; drop --gemm or use --backend cuda");
  if (options.activations != ActivationImpl::ours)
    throw UserError(
        "--activations cudnn: only the cuda backend has a cuDNN path; drop --activations or use --backend cuda");
}

namespace {

std::unique_ptr<Backend> make_cpu(const BackendOptions& options) {
  check_cpu_options(options);
  return std::make_unique<CpuBackend>(options.threads);
}

}  // namespace

std::unique_ptr<Backend> make_backend(const BackendOptions& options, std::ostream& log,
                                      std::shared_ptr<const GreenContext> partition) {
  if (options.kind == BackendKind::cpu) return make_cpu(options);
  const CudaOptions cuda{options.device, options.gemm, options.activations, std::move(partition)};
  if (options.kind == BackendKind::host_exec) return hostexec::make_cuda_backend(cuda);
#if defined(MF_HAVE_CUDA)
  if (options.kind == BackendKind::cuda) {
    const DeviceQuery query = query_devices();
    if (query.devices.empty())
      throw UserError("--backend cuda: no usable CUDA device (" + query.why_none +
                      "); use --backend cpu or --backend auto");
    return gpu::make_cuda_backend(cuda);
  }
  if (resolve_auto(options, log).kind == BackendKind::cpu) return make_cpu(options);
  // A listed device can still refuse a context (exclusive mode, no memory): auto then falls back.
  try {
    return gpu::make_cuda_backend(cuda);
  } catch (const CudaError& e) {
    // GPU-only paths asked for
    if (cuda.gemm != GemmImpl::tiled || cuda.activations != ActivationImpl::ours) throw;
    log << "multifit: backend auto: cpu after all (the CUDA device is not usable: " << e.what()
        << ")\n";
    return make_cpu(options);
  }
#else
  if (options.kind == BackendKind::cuda)
    throw UserError("--backend cuda: " + query_devices().why_none +
                    "; use --backend cpu, host-exec or auto");
  resolve_auto(options, log);  // says cpu, and why
  return make_cpu(options);
#endif
}

size_t max_training_threads(const BackendOptions& options) {
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  switch (options.kind) {
    case BackendKind::host_exec:
      return cores;
    case BackendKind::cpu:
      try {
        return std::min(size_t(std::max(1, options.threads)), size_t(cpu::openblas_max_threads()));
      } catch (const UserError&) {
        // no OpenBLAS: every model will say so when it makes its backend
        return 1;
      }
    case BackendKind::automatic:
    case BackendKind::cuda:
      break;
  }
  return 4 * cores;
}

bool use_graphs(const BackendOptions& options, const Backend& backend) {
  if (!backend.has_graphs() || options.graphs == GraphsChoice::off) return false;
  return options.graphs == GraphsChoice::on || backend.name() != "host-exec";
}

BackendOptions resolve_auto(const BackendOptions& options, std::ostream& log) {
  if (options.kind != BackendKind::automatic) return options;
  BackendOptions resolved = options;
  const DeviceQuery query = query_devices();
  resolved.kind = query.devices.empty() ? BackendKind::cpu : BackendKind::cuda;
  if (query.devices.empty())
    log << "multifit: backend auto: cpu (no usable CUDA device: " << query.why_none << ")\n";
  else
    log << "multifit: backend auto: cuda (" << describe(query.devices[0]) << ")\n";
  return resolved;
}

}  // namespace mf
