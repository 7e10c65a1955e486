// Deterministic metric accumulation. Must equal: loss_cpu.cpp's accumulate. Checked by:
// tests/parity/test_kernel_parity.cpp (KernelParity.AccumulateIsDeterministic). One block;
// thread t sums rows t, t+256, ... in order, then a fixed tree in shared memory
// combines the partial sums. No float atomics, so the same batch always gives
// the same totals.
#include "kernels/block_sums.h"
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

__global__ void accumulate_kernel(const float* row_loss, const float* row_correct, int m, double* totals) {
  double loss = 0, correct = 0;
  for (int r = int(threadIdx.x); r < m; r += kAccumulateThreads) loss += row_loss[r], correct += row_correct[r];
  add_block_sums(loss, correct, totals);
}

}  // namespace

void accumulate(const float* row_loss, const float* row_correct, int m, double* totals, cudaStream_t stream) {
  launch{accumulate_kernel, dim3(1), dim3(kAccumulateThreads), stream}(row_loss, row_correct, m, totals);
}

}  // namespace mf::MF_TARGET
