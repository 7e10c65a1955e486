#pragma once
// A block's sums in a fixed order: each thread's value goes into shared memory, a tree of strides
// kBlockThreads/2, /4, ... combines them. The order depends only on the block size, so the same
// inputs always give the same sums, with no float atomics. Shared by the metric accumulation
// (reduce.cu) and the loss pass that folds it in (loss.cu), so that the two add identically, and by
// the passes over the parameters (optimizer.cu, regularizers.cu).
#include "kernels/loss_row.h"
#include "target/target.h"

namespace mf::MF_TARGET {

constexpr int kBlockThreads = 256;
constexpr int kAccumulateThreads = kBlockThreads;
constexpr int kMaxValues = 1 + kMaxMetricValues;  // a row's loss and its metrics' values

// totals[v] += the block's sum of each thread's values[v], v < count (at most kMaxValues). Every
// thread of a block of kBlockThreads calls it (it holds barriers).
__device__ inline void add_block_sums(const double* values, int count, double* totals) {
  __shared__ double sums[kMaxValues][kBlockThreads];
  const int t = int(threadIdx.x);
  for (int v = 0; v < count; ++v) sums[v][t] = values[v];
  __syncthreads();
  for (int stride = kBlockThreads / 2; stride > 0; stride /= 2) {
    if (t < stride)
      for (int v = 0; v < count; ++v) sums[v][t] += sums[v][t + stride];
    __syncthreads();
  }
  if (t == 0)
    for (int v = 0; v < count; ++v) totals[v] += sums[v][0];
  __syncthreads();  // the storage is free again for a next call
}

// The block's sum of each thread's `value`, returned to every thread. Every thread of a block of
// kBlockThreads calls it.
__device__ inline double block_sum(double value) {
  __shared__ double sums[kBlockThreads];
  const int t = int(threadIdx.x);
  sums[t] = value;
  __syncthreads();
  for (int stride = kBlockThreads / 2; stride > 0; stride /= 2) {
    if (t < stride) sums[t] += sums[t + stride];
    __syncthreads();
  }
  const double total = sums[0];
  __syncthreads();  // every thread has read it before a next call writes
  return total;
}

// The sum of values[0..count) in a fixed order: thread t adds t, t + kBlockThreads, ... in order,
// then block_sum. Every thread of the block calls it.
__device__ inline double block_sum_of(const double* values, int64_t count) {
  double part = 0;
  for (int64_t i = threadIdx.x; i < count; i += kBlockThreads) part += values[i];
  return block_sum(part);
}

}  // namespace mf::MF_TARGET
