// Bias gradient as a column reduction. Must equal: dense_cpu.cpp's dense_backward_params (db).
// Checked by: tests/hostexec/test_bias_grad.cpp (the tiled path folds the bias gradient into
// gemm.cu; the cuBLAS path launches this kernel: tests/gpu, GpuCublas). Block (32, 8): 32 columns
// per block, a pack's members along grid.y; the 8 rows of threads each sum a fixed stride of rows,
// then a tree in shared memory adds the 8 partial sums. The order of additions depends only on the
// shape: deterministic.
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

constexpr int kCols = 32, kRows = 8;

__global__ void bias_grad_kernel(const float* dZ, float* db, int m, int n, Pack pack) {
  dZ = member(dZ, int(blockIdx.y), pack.stride), db = member(db, int(blockIdx.y), pack.stride);
  __shared__ float partial[kRows][kCols + 1];
  const int tx = int(threadIdx.x), ty = int(threadIdx.y);
  const int col = int(blockIdx.x) * kCols + tx;
  float sum = 0.f;
  // a warp reads 32 adjacent columns
  if (col < n)
    for (int r = ty; r < m; r += kRows) sum += dZ[int64_t(r) * n + col];
  partial[ty][tx] = sum;
  __syncthreads();
  for (int stride = kRows / 2; stride > 0; stride /= 2) {
    if (ty < stride) partial[ty][tx] += partial[ty + stride][tx];
    __syncthreads();
  }
  if (ty == 0 && col < n) db[col] = partial[0][tx];
}

}  // namespace

void bias_grad(const float* dZ, float* db, int m, int n, const Pack& pack, cudaStream_t stream) {
  launch{bias_grad_kernel, dim3((n + kCols - 1) / kCols, unsigned(pack.count)), dim3(kCols, kRows),
         stream}(dZ, db, m, n, pack);
}

}  // namespace mf::MF_TARGET
