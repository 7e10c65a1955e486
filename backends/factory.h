#pragma once
// The one factory of backends, from typed options: --backend auto|cpu|cuda|host-exec,
// --gemm tiled|cublas, --activations ours|cudnn and --graphs on|off|auto. host-exec runs the
// CUDA kernels on the CPU (target/host_exec.h): slow, but it shows the GPU code path working on a
// machine without a GPU.
#include <algorithm>
#include <iosfwd>
#include <memory>
#include <string>

#include "backends/backend.h"
#include "backends/cuda/cuda_backend.h"
#include "runtime/names.h"

namespace mf {

enum class BackendKind { automatic, cpu, cuda, host_exec };
inline constexpr Named<BackendKind> kBackendNames[] = {{"auto", BackendKind::automatic},
                                                       {"cpu", BackendKind::cpu},
                                                       {"cuda", BackendKind::cuda},
                                                       {"host-exec", BackendKind::host_exec}};
inline const char* to_string(BackendKind k) { return name_of(kBackendNames, k); }

// Training steps recorded once and replayed (CUDA graphs on a GPU, recorded steps on the cpu): on,
// off, or auto (on, but for host-exec, whose emulated graphs are for tests of the GPU path).
enum class GraphsChoice { automatic, on, off };
inline constexpr Named<GraphsChoice> kGraphsNames[] = {
    {"auto", GraphsChoice::automatic}, {"on", GraphsChoice::on}, {"off", GraphsChoice::off}};

struct BackendOptions {
  BackendKind kind = BackendKind::automatic;
  GemmImpl gemm = GemmImpl::tiled;  // the CUDA products: our kernels, or cuBLAS's (reference)
  // activations and softmax: ours, or cuDNN's (reference)
  ActivationImpl activations = ActivationImpl::ours;
  GraphsChoice graphs = GraphsChoice::automatic;
  int device = 0;  // the CUDA device (cuda, host-exec)
  // the cpu backend's host threads for one model or pack (backends/cpu/cpu_backend.h)
  int threads = 1;
};

// `options` on CUDA device `device` (--devices gives each model its own); the cpu and host
// execution have one device each, so for them --devices is recorded and has no effect.
inline BackendOptions on_device(BackendOptions options, int device) {
  if (options.kind == BackendKind::cuda) options.device = device;
  return options;
}

// `options` for one of `at_once` models (or packs) that train at the same time: an equal share of
// its threads, at least 1, so that no more threads are busy than the run was given (with more
// models than threads, one each).
inline BackendOptions sharing_threads(BackendOptions options, size_t at_once) {
  if (at_once > 1) options.threads = std::max(1, int(size_t(options.threads) / at_once));
  return options;
}

// auto resolved to cuda when a device is listed, else cpu, said in one line on `log`; other kinds
// unchanged. Queries the devices without creating a context, so that the parent of worker
// processes holds no device memory.
BackendOptions resolve_auto(const BackendOptions& options, std::ostream& log);

// auto picks cuda when a usable device exists, else cpu, and says which in one
// line on `log`. cuda without a device, or cublas or cudnn on the cpu, is a UserError.
// `partition`: the green context whose SMs a cuda backend runs on (CudaOptions::partition; none:
// the whole GPU), a UserError on host execution and ignored by the cpu backend, which has no SMs.
std::unique_ptr<Backend> make_backend(const BackendOptions& options, std::ostream& log,
                                      std::shared_ptr<const GreenContext> partition = nullptr);

// The options only the cuda backend has (--gemm cublas, --activations cudnn), asked of the cpu
// backend: a UserError naming the option.
void check_cpu_options(const BackendOptions& options);

// The most host threads that may train models at once on `options`' backend (streams and packed
// mode drive many models from a pool of this many at most): 4 per hardware thread for cuda (a
// thread spends most of a step waiting on its stream), one per hardware thread for host execution
// (each launch runs its blocks on threads of its own), and for the cpu backend options.threads (the
// cores it was given: never more busy threads than cores) but never more than OpenBLAS's
// MAX_THREADS (kernels/openblas.h: past its table of buffers it ends the process). At least 1.
// Loads OpenBLAS for cpu.
size_t max_training_threads(const BackendOptions& options);

// Whether training steps are recorded and replayed on `backend`: --graphs on where the backend has
// them (cuda's CUDA graphs, the cpu's recorded steps; host-exec emulates CUDA graphs,
// target/host_exec_runtime.h), auto on cuda and the cpu.
bool use_graphs(const BackendOptions& options, const Backend& backend);

}  // namespace mf
