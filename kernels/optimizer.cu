// Optimizer steps, one launch over the flat parameter buffers of a pack's members (grid.y), each
// with its own settings. Must equal: optimizer_cpu.cpp (the update itself is element_math.h's,
// shared). Checked by: tests/parity/test_kernel_parity.cpp (KernelParity.OptimizerSteps, PackParity.*).
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

constexpr int kThreads = 256;

__global__ void adam_kernel(float* w, const float* g, float* m, float* v, int64_t n, const MemberSettings* settings,
                            int64_t t, Pack pack) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int z = int(blockIdx.y);
  const AdamStep step = adam_step(*member(settings, z, pack.stride), t);
  adam_update(member(w, z, pack.stride)[i], member(m, z, pack.stride)[i], member(v, z, pack.stride)[i],
              member(g, z, pack.stride)[i], step);
}

__global__ void sgd_kernel(float* w, const float* g, float* velocity, int64_t n, const MemberSettings* settings,
                           Pack pack) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int z = int(blockIdx.y);
  const MemberSettings& s = *member(settings, z, pack.stride);
  sgd_update(member(w, z, pack.stride)[i], member(velocity, z, pack.stride)[i], member(g, z, pack.stride)[i],
             s.learning_rate, s.momentum);
}

dim3 member_grid(int64_t n, const Pack& pack) { return dim3(blocks_for(n, kThreads).x, unsigned(pack.count)); }

}  // namespace

void adam(float* w, const float* g, float* m, float* v, int64_t n, const MemberSettings* settings, int64_t t,
          const Pack& pack, cudaStream_t stream) {
  launch{adam_kernel, member_grid(n, pack), dim3(kThreads), stream}(w, g, m, v, n, settings, t, pack);
}

void sgd(float* w, const float* g, float* velocity, int64_t n, const MemberSettings* settings, const Pack& pack,
         cudaStream_t stream) {
  launch{sgd_kernel, member_grid(n, pack), dim3(kThreads), stream}(w, g, velocity, n, settings, pack);
}

}  // namespace mf::MF_TARGET
