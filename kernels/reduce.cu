// Deterministic metric accumulation. Must equal: loss_cpu.cpp's accumulate. Checked by:
// tests/parity/test_kernel_parity.cpp (KernelParity.AccumulateIsDeterministic, PackParity.*). One
// block per pack member (grid.y); thread t sums rows t, t+256, ... in order, then a fixed tree in
// shared memory combines the partial sums. No float atomics, so the same batch always gives the
// same totals.
#include "kernels/block_sums.h"
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

// values(m, count): each row's loss and its metrics' values.
__global__ void accumulate_kernel(const float* values, int count, int m, double* totals,
                                  Pack pack) {
  const int z = int(blockIdx.y);
  if (stopped(pack, z)) return;  // the whole block: its member's
  values = member(values, z, pack.stride);
  double sums[kMaxValues] = {};
  for (int r = int(threadIdx.x); r < m; r += kAccumulateThreads)
    for (int v = 0; v < count; ++v) sums[v] += values[int64_t(r) * count + v];
  add_block_sums(sums, count, member(totals, z, pack.stride));
  if (threadIdx.x == 0) count_step(pack, z);
}

}  // namespace

void accumulate(const float* values, int count, int m, double* totals, const Pack& pack,
                cudaStream_t stream) {
  launch{accumulate_kernel, dim3(1, unsigned(pack.count)), dim3(kAccumulateThreads), stream}(
      values, count, m, totals, pack);
}

}  // namespace mf::MF_TARGET
