// Optimizer steps, one launch over the model's flat parameter buffer. Must equal:
// optimizer_cpu.cpp (the update itself is element_math.h's, shared). Checked by:
// tests/parity/test_kernel_parity.cpp (KernelParity.OptimizerSteps).
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

constexpr int kThreads = 256;

__global__ void adam_kernel(float* w, const float* g, float* m, float* v, int64_t n, AdamStep step) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) adam_update(w[i], m[i], v[i], g[i], step);
}

__global__ void sgd_kernel(float* w, const float* g, float* velocity, int64_t n, float lr, float momentum) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) sgd_update(w[i], velocity[i], g[i], lr, momentum);
}


}  // namespace

void adam(float* w, const float* g, float* m, float* v, int64_t n, AdamStep step, cudaStream_t stream) {
  launch{adam_kernel, blocks_for(n, kThreads), dim3(kThreads), stream}(w, g, m, v, n, step);
}

void sgd(float* w, const float* g, float* velocity, int64_t n, float lr, float momentum, cudaStream_t stream) {
  launch{sgd_kernel, blocks_for(n, kThreads), dim3(kThreads), stream}(w, g, velocity, n, lr, momentum);
}

}  // namespace mf::MF_TARGET
