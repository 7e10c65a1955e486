// Deterministic metric accumulation. Must equal: loss_cpu.cpp's accumulate and count_codes.
// Checked by: tests/parity/test_kernel_parity.cpp (KernelParity.AccumulateIsDeterministic,
// KernelParity.CountCodes, PackParity.*). One block per pack member (grid.y); thread t sums rows
// t, t+256, ... in order, then a fixed tree in shared memory combines the partial sums. No float
// atomics, so the same batch always gives the same totals.
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

// Thread t owns bins t, t + 256, ...: it counts the rows whose code names each (the codes are read
// by every thread: m of them, a batch's rows), so no two threads add to one bin.
__global__ void count_codes_kernel(const float* values, int count, int column, int m, double* bins,
                                   int bin_count, Pack pack) {
  const int z = int(blockIdx.y);
  if (stopped(pack, z)) return;
  values = member(values, z, pack.stride);
  bins = member(bins, z, pack.stride);
  for (int bin = int(threadIdx.x); bin < bin_count; bin += kBlockThreads) {
    int rows = 0;
    for (int r = 0; r < m; ++r) rows += int(values[int64_t(r) * count + column]) == bin ? 1 : 0;
    bins[bin] += double(rows);
  }
}

}  // namespace

void count_codes(const float* values, int count, int column, int m, double* bins, int bin_count,
                 const Pack& pack, cudaStream_t stream) {
  launch{count_codes_kernel, dim3(1, unsigned(pack.count)), dim3(kBlockThreads), stream}(
      values, count, column, m, bins, bin_count, pack);
}

void accumulate(const float* values, int count, int m, double* totals, const Pack& pack,
                cudaStream_t stream) {
  launch{accumulate_kernel, dim3(1, unsigned(pack.count)), dim3(kAccumulateThreads), stream}(
      values, count, m, totals, pack);
}

}  // namespace mf::MF_TARGET
