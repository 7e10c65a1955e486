#pragma once
// A block's two metric sums (row losses, row accuracies), added to totals in a fixed order: each
// thread's pair goes into shared memory, a tree of strides kAccumulateThreads/2, /4, ... combines
// them, and thread 0 adds the result. The order depends only on the block size, so the same batch
// always gives the same totals, with no float atomics. Shared by the metric accumulation
// (reduce.cu) and the loss pass that folds it in (loss.cu), so that the two add identically.
#include "target/target.h"

namespace mf::MF_TARGET {

constexpr int kAccumulateThreads = 256;

// Every thread of a block of kAccumulateThreads calls it (it holds barriers).
__device__ inline void add_block_sums(double loss, double correct, double* totals) {
  __shared__ double loss_sum[kAccumulateThreads], correct_sum[kAccumulateThreads];
  const int t = int(threadIdx.x);
  loss_sum[t] = loss;
  correct_sum[t] = correct;
  __syncthreads();
  for (int stride = kAccumulateThreads / 2; stride > 0; stride /= 2) {
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

}  // namespace mf::MF_TARGET
