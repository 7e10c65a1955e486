// Optimizer steps, one launch over the flat parameter buffers of a pack's members (grid.y), each
// with its own settings. Must equal: optimizer_cpu.cpp (the update itself is element_math.h's,
// shared). Checked by: tests/parity/test_kernel_parity.cpp (KernelParity.OptimizerSteps, PackParity.*).
#include <stdexcept>

#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

constexpr int kThreads = 256;

// The optimizer step is a training step's last launch: it moves the batch on. Nothing in it reads
// first_row, and all of its blocks read t, which only the loss pass changes.
__device__ __forceinline__ void next_batch(const Pack& pack, int z, int batch_rows) {
  if (pack.step && blockIdx.x == 0 && threadIdx.x == 0) member(pack.step, z, pack.stride)->first_row += batch_rows;
}

__global__ void adam_kernel(float* w, const float* g, float* m, float* v, int64_t n, const MemberSettings* settings,
                            int batch_rows, Pack pack) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int z = int(blockIdx.y);
  next_batch(pack, z, batch_rows);
  if (i >= n) return;
  const AdamStep step = adam_step(*member(settings, z, pack.stride), member(pack.step, z, pack.stride)->t);
  adam_update(member(w, z, pack.stride)[i], member(m, z, pack.stride)[i], member(v, z, pack.stride)[i],
              member(g, z, pack.stride)[i], step);
}

__global__ void sgd_kernel(float* w, const float* g, float* velocity, int64_t n, const MemberSettings* settings,
                           int batch_rows, Pack pack) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int z = int(blockIdx.y);
  next_batch(pack, z, batch_rows);
  if (i >= n) return;
  const MemberSettings& s = *member(settings, z, pack.stride);
  sgd_update(member(w, z, pack.stride)[i], member(velocity, z, pack.stride)[i], member(g, z, pack.stride)[i],
             s.learning_rate, s.momentum);
}

dim3 member_grid(int64_t n, const Pack& pack) { return dim3(blocks_for(n, kThreads).x, unsigned(pack.count)); }

}  // namespace

void adam(float* w, const float* g, float* m, float* v, int64_t n, const MemberSettings* settings, int batch_rows,
          const Pack& pack, cudaStream_t stream) {
  if (!pack.step) throw std::invalid_argument("adam: no step state (Pack::step) to take the step count from");
  launch{adam_kernel, member_grid(n, pack), dim3(kThreads), stream}(w, g, m, v, n, settings, batch_rows, pack);
}

void sgd(float* w, const float* g, float* velocity, int64_t n, const MemberSettings* settings, int batch_rows,
         const Pack& pack, cudaStream_t stream) {
  launch{sgd_kernel, member_grid(n, pack), dim3(kThreads), stream}(w, g, velocity, n, settings, batch_rows, pack);
}

}  // namespace mf::MF_TARGET
