// The epoch shuffle and the minibatch gather, on the device, for every member of a pack in one
// launch. Must equal: batch_cpu.cpp (the same permutation exactly). Checked by:
// tests/parity/test_kernel_parity.cpp (KernelParity.ShuffleAndGather, PackParity.*).
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

constexpr int kThreads = 256;

// order(n): element i of member grid.y's keyed permutation; every thread independent.
__global__ void shuffle_kernel(int* order, int n, const MemberSettings* settings, int epoch,
                               Pack pack) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int z = int(blockIdx.y);
  if (i >= n || stopped(pack, z)) return;
  member(order, z, pack.rows_stride)[i] = int(permute_index(
      uint32_t(i), uint32_t(n), member(settings, z, pack.stride)->seed, uint32_t(epoch)));
}

// dst(m,cols) = src rows order[first_row..+m): grid.x walks the batch rows (no 65535 limit there),
// grid.y and the threads walk the columns (coalesced), grid.z the members.
__global__ void gather_kernel(const float* src, int cols, const int* order, float* dst, Pack pack) {
  const int z = int(blockIdx.z);
  if (stopped(pack, z)) return;
  const int64_t r = blockIdx.x;
  const float* from =
      src + int64_t(member(order, z, pack.rows_stride)[first_row(pack, z) + r]) * cols;
  float* to = member(dst, z, pack.data_stride) + r * cols;
  for (int c = int(blockIdx.y * blockDim.x + threadIdx.x); c < cols;
       c += int(gridDim.y * blockDim.x))
    to[c] = from[c];
}

}  // namespace

void shuffle(int* order, int n, const MemberSettings* settings, int epoch, const Pack& pack,
             cudaStream_t stream) {
  launch{shuffle_kernel, dim3(blocks_for(n, kThreads).x, unsigned(pack.count)), dim3(kThreads),
         stream}(order, n, settings, epoch, pack);
}

void gather(const float* src, int cols, const int* order, int m, float* dst, const Pack& pack,
            cudaStream_t stream) {
  // whole warps, no idle blocks
  const int threads = cols >= kThreads ? kThreads : (cols + 31) / 32 * 32;
  const unsigned column_blocks = unsigned((cols + threads - 1) / threads);
  launch{gather_kernel,
         dim3(unsigned(m), column_blocks < 65535 ? column_blocks : 65535, unsigned(pack.count)),
         dim3(unsigned(threads)), stream}(src, cols, order, dst, pack);
}

}  // namespace mf::MF_TARGET
