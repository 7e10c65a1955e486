// Deterministic metric accumulation. Must equal: loss_cpu.cpp's accumulate. Checked by:
// tests/parity/test_kernel_parity.cpp (KernelParity.AccumulateIsDeterministic). One block;
// thread t sums rows t, t+256, ... in order, then a fixed tree in shared memory
// combines the partial sums. No float atomics, so the same batch always gives
// the same totals.
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

constexpr int kThreads = 256;

__global__ void accumulate_kernel(const float* row_loss, const float* row_correct, int m, double* totals) {
  __shared__ double loss_sum[kThreads], correct_sum[kThreads];
  const int t = int(threadIdx.x);
  double loss = 0, correct = 0;
  for (int r = t; r < m; r += kThreads) loss += row_loss[r], correct += row_correct[r];
  loss_sum[t] = loss;
  correct_sum[t] = correct;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (t < stride) {
      loss_sum[t] += loss_sum[t + stride];
      correct_sum[t] += correct_sum[t + stride];
    }
    __syncthreads();
  }
  if (t == 0) {
    totals[0] += loss_sum[0];
    totals[1] += correct_sum[0];
  }
}

}  // namespace

void accumulate(const float* row_loss, const float* row_correct, int m, double* totals, cudaStream_t stream) {
  launch{accumulate_kernel, dim3(1), dim3(kThreads), stream}(row_loss, row_correct, m, totals);
}

}  // namespace mf::MF_TARGET
