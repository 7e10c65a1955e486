#pragma once
// Kernel sources are compiled twice. nvcc builds them for the GPU in namespace
// mf::gpu; the host compiler builds them with MF_HOST_EXEC for host execution
// in namespace mf::hostexec (host_exec.h), so that every kernel runs in CI on a
// machine without a GPU. Code that includes this header is written once against
// the CUDA runtime API and wraps itself in `namespace mf::MF_TARGET`.
#if defined(MF_HOST_EXEC)
#include "target/host_exec.h"
#define MF_TARGET hostexec
#else
#include <cuda_runtime.h>
#define MF_TARGET gpu
#endif

#include <cxxabi.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "runtime/error.h"

namespace mf {

// MULTIFIT_SYNC_LAUNCHES=1 (a debug aid, like CUDA_LAUNCH_BLOCKING): every kernel launch is
// followed by a wait on its stream and a check, so that a device fault is reported at the launch
// that caused it, with the kernel's name and the launch's file:line, instead of at a later,
// unrelated call.
inline bool sync_launches() {
  static const bool on = [] {
    const char* value = std::getenv("MULTIFIT_SYNC_LAUNCHES");
    return value && *value && std::string(value) != "0";
  }();
  return on;
}

}  // namespace mf

namespace mf::MF_TARGET {

inline void cuda_check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(call, file, line, cudaGetErrorString(status));
}

#if defined(__CUDACC__)
// A kernel's readable name ("mf::gpu::(anonymous namespace)::gemm_tiled<64, 64, ...>(...)"), from
// CUDA.
inline std::string kernel_name(const void* kernel) {
  const char* mangled = nullptr;
  if (cudaFuncGetName(&mangled, kernel) != cudaSuccess || !mangled) return "kernel";
  int status = 0;
  char* readable = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  const std::string name = status == 0 && readable ? readable : mangled;
  std::free(readable);
  return name;
}
#endif

// Kernels launched by this process through launch{} (our kernels, not cuBLAS's or cuDNN's): a
// training step's launches are its fixed cost on a GPU, about 2 µs each, whatever the model's size.
inline std::atomic<int64_t>& kernel_launches() {
  static std::atomic<int64_t> count{0};
  return count;
}

// Blocks of `threads` threads enough to cover `count` items, one item a thread.
inline dim3 blocks_for(int64_t count, int threads) {
  return dim3(unsigned((count + threads - 1) / threads));
}

// launch{kernel, grid, block, stream}(args...) is kernel<<<grid, block, 0, stream>>>(args...),
// with the launch checked and reported at the caller's file:line.
template <class... Params>
struct launch {
  void (*kernel)(Params...);
  dim3 grid, block;
  cudaStream_t stream;
  const char* file = __builtin_FILE();  // the caller's, as for std::source_location
  int line = __builtin_LINE();

  template <class... Args>
  void operator()(Args... args) const {
    kernel_launches().fetch_add(1, std::memory_order_relaxed);
#if defined(MF_HOST_EXEC)
    // In order, now (host execution runs every stream in issue order), or recorded by a capture
    // with its arguments as they are now.
    const auto run = [kernel = kernel, grid = grid, block = block, args...] {
      return run_grid(grid, block, [&] { kernel(Params(args)...); });
    };
    cuda_check(launch_on(stream, run), "kernel launch", file, line);
#elif defined(__CUDACC__)
    // In a .h clang-format reads the launch as C++ and would break >>> apart.
    // clang-format off
    kernel<<<grid, block, 0, stream>>>(Params(args)...);
    // clang-format on
    cuda_check(cudaGetLastError(), "kernel launch", file, line);
    if (sync_launches())
      cuda_check(cudaStreamSynchronize(stream),
                 (kernel_name(reinterpret_cast<const void*>(kernel)) + " (MULTIFIT_SYNC_LAUNCHES)")
                     .c_str(),
                 file, line);
#else
    static_assert(sizeof...(Args) < 0, "kernels are launched from .cu files");
#endif
  }
};
template <class... Params>
launch(void (*)(Params...), dim3, dim3, cudaStream_t) -> launch<Params...>;

}  // namespace mf::MF_TARGET
