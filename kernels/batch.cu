// The epoch shuffle and the minibatch gather, on the device. Must equal: batch_cpu.cpp (the same
// permutation exactly). Checked by: tests/parity/test_kernel_parity.cpp (KernelParity.ShuffleAndGather).
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

constexpr int kThreads = 256;

// order(n): element i of the keyed permutation; every thread independent.
__global__ void shuffle_kernel(int* order, int n, uint64_t seed, int epoch) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) order[i] = int(permute_index(uint32_t(i), uint32_t(n), seed, uint32_t(epoch)));
}

// dst(m,cols) = src rows order[0..m): grid.x walks the batch rows (no 65535 limit there),
// grid.y and the threads walk the columns (coalesced).
__global__ void gather_kernel(const float* src, int cols, const int* order, float* dst) {
  const int64_t r = blockIdx.x;
  const float* from = src + int64_t(order[r]) * cols;
  float* to = dst + r * cols;
  for (int c = int(blockIdx.y * blockDim.x + threadIdx.x); c < cols; c += int(gridDim.y * blockDim.x))
    to[c] = from[c];
}

}  // namespace

void shuffle(int* order, int n, uint64_t seed, int epoch, cudaStream_t stream) {
  launch{shuffle_kernel, blocks_for(n, kThreads), dim3(kThreads), stream}(order, n, seed, epoch);
}

void gather(const float* src, int cols, const int* order, int m, float* dst, cudaStream_t stream) {
  const int threads = cols >= kThreads ? kThreads : (cols + 31) / 32 * 32;  // whole warps, no idle blocks
  const unsigned column_blocks = unsigned((cols + threads - 1) / threads);
  launch{gather_kernel, dim3(unsigned(m), column_blocks < 65535 ? column_blocks : 65535), dim3(unsigned(threads)),
         stream}(src, cols, order, dst);
}

}  // namespace mf::MF_TARGET
