// Deterministic metric accumulation. Must equal: loss_cpu.cpp's accumulate. Checked by:
// tests/parity/test_kernel_parity.cpp (KernelParity.AccumulateIsDeterministic, PackParity.*). One
// block per pack member (grid.y); thread t sums rows t, t+256, ... in order, then a fixed tree in
// shared memory combines the partial sums. No float atomics, so the same batch always gives the
// same totals.
#include "kernels/block_sums.h"
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

__global__ void accumulate_kernel(const float* row_loss, const float* row_correct, int m, double* totals, Pack pack) {
  const int z = int(blockIdx.y);
  row_loss = member(row_loss, z, pack.stride), row_correct = member(row_correct, z, pack.stride);
  double loss = 0, correct = 0;
  for (int r = int(threadIdx.x); r < m; r += kAccumulateThreads) loss += row_loss[r], correct += row_correct[r];
  add_block_sums(loss, correct, member(totals, z, pack.stride));
  if (threadIdx.x == 0) count_step(pack, z);
}

}  // namespace

void accumulate(const float* row_loss, const float* row_correct, int m, double* totals, const Pack& pack,
                cudaStream_t stream) {
  launch{accumulate_kernel, dim3(1, unsigned(pack.count)), dim3(kAccumulateThreads), stream}(row_loss, row_correct, m,
                                                                                              totals, pack);
}

}  // namespace mf::MF_TARGET
