// BatchNormalization, forward and backward (Ioffe & Szegedy, ICML 2015; kernels/layer_math.h): a
// block per 32 columns of a member, its 256 threads 32 columns by 8 row lanes; each lane sums its
// rows r, r + 8, ... in order and a fixed tree over the lanes combines them, so the statistics are
// deterministic. The inference forward is element-wise. Must equal: layers_cpu.cpp. Checked by:
// tests/parity/test_kernel_parity.cpp (LayerParity.BatchNormalization*),
// tests/parity/test_pack_parity.cpp.
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

constexpr int kColumns = 32, kLanes = 8, kThreads = kColumns * kLanes;

// The sum over the block's lanes of each column's `value`, returned to every thread of the column.
// Every thread of the block calls it.
__device__ inline double column_sum(double value) {
  __shared__ double sums[kLanes][kColumns];
  const int column = int(threadIdx.x) % kColumns, lane = int(threadIdx.x) / kColumns;
  sums[lane][column] = value;
  __syncthreads();
  for (int stride = kLanes / 2; stride > 0; stride /= 2) {
    if (lane < stride) sums[lane][column] += sums[lane + stride][column];
    __syncthreads();
  }
  const double total = sums[0][column];
  __syncthreads();  // read by every thread before a next call writes
  return total;
}

__global__ void batch_norm_train_kernel(const float* X, float* Y, int m, int n, BatchNormBuffers bn,
                                        const LayerSettings* layers, Pack pack) {
  const int z = int(blockIdx.y);
  if (stopped(pack, z)) return;  // the whole block: its member's
  const int c = int(blockIdx.x) * kColumns + int(threadIdx.x) % kColumns,
            lane = int(threadIdx.x) / kColumns;
  const bool valid = c < n;
  const float* x = member(X, z, pack.data_stride);
  float* y = member(Y, z, pack.stride);
  const BatchNormBuffers b = member_buffers(bn, z, pack.stride);
  const LayerSettings& s = member(layers, z, pack.stride)[bn.layer];
  double sum = 0;
  if (valid)
    for (int r = lane; r < m; r += kLanes) sum += x[int64_t(r) * n + c];
  const float mean = float(column_sum(sum) / m);
  double squares = 0;
  if (valid)
    for (int r = lane; r < m; r += kLanes) {
      const float d = x[int64_t(r) * n + c] - mean;
      squares += d * d;
    }
  const float variance = float(column_sum(squares) / m);  // biased, as tf.nn.moments
  if (!valid) return;
  const float inverse = batch_norm_inverse(variance, s.epsilon);
  if (lane == 0) {
    b.mean[c] = mean, b.inverse[c] = inverse;
    b.moving_mean[c] = b.moving_mean[c] * s.momentum + mean * s.one_minus_momentum;
    b.moving_variance[c] = b.moving_variance[c] * s.momentum + variance * s.one_minus_momentum;
  }
  for (int r = lane; r < m; r += kLanes)
    y[int64_t(r) * n + c] =
        batch_norm_output(x[int64_t(r) * n + c], mean, inverse, b.gamma, b.beta, c);
}

__global__ void batch_norm_infer_kernel(const float* X, float* Y, int m, int n, BatchNormBuffers bn,
                                        const LayerSettings* layers, Pack pack) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int z = int(blockIdx.y);
  if (i >= int64_t(m) * n || stopped(pack, z)) return;
  const BatchNormBuffers b = member_buffers(bn, z, pack.stride);
  const LayerSettings& s = member(layers, z, pack.stride)[bn.layer];
  const int64_t c = i % n;
  member(Y, z, pack.stride)[i] =
      batch_norm_output(member(X, z, pack.data_stride)[i], b.moving_mean[c],
                        batch_norm_inverse(b.moving_variance[c], s.epsilon), b.gamma, b.beta, c);
}

// d/dx of y = gamma xhat + beta, xhat = (x - mean) inverse, through the batch's mean and variance:
// dx = gamma inverse / m (m dy - Σ dy - xhat Σ dy xhat); dbeta = Σ dy, dgamma = Σ dy xhat.
__global__ void batch_norm_backward_kernel(const float* X, const float* dY, float* dX, int m, int n,
                                           BatchNormBuffers bn, Through below, Pack pack) {
  const int z = int(blockIdx.y);
  if (stopped(pack, z)) return;  // the whole block: its member's
  const int c = int(blockIdx.x) * kColumns + int(threadIdx.x) % kColumns,
            lane = int(threadIdx.x) / kColumns;
  const bool valid = c < n;
  const float* x = member(X, z, pack.data_stride);
  const float* dy = member(dY, z, pack.stride);
  float* dx = member(dX, z, pack.stride);
  const BatchNormBuffers b = member_buffers(bn, z, pack.stride);
  below = member_through(below, z, pack.stride);
  const float mean = valid ? b.mean[c] : 0.f, inverse = valid ? b.inverse[c] : 0.f;
  double sum_dy = 0, sum_dy_xhat = 0;
  if (valid)
    for (int r = lane; r < m; r += kLanes) {
      const int64_t at = int64_t(r) * n + c;
      sum_dy += dy[at];
      sum_dy_xhat += dy[at] * ((x[at] - mean) * inverse);
    }
  const double dbeta = column_sum(sum_dy), dgamma = column_sum(sum_dy_xhat);
  if (!valid) return;
  if (lane == 0) {
    if (b.dbeta) b.dbeta[c] = float(dbeta);
    if (b.dgamma) b.dgamma[c] = float(dgamma);
  }
  if (!dx) return;
  const float scale = (b.gamma ? b.gamma[c] : 1.f) * inverse / float(m);
  for (int r = lane; r < m; r += kLanes) {
    const int64_t at = int64_t(r) * n + c;
    const float xhat = (x[at] - mean) * inverse;
    dx[at] = below.apply(scale * (float(m) * dy[at] - float(dbeta) - xhat * float(dgamma)), at);
  }
}

dim3 column_grid(int n, const Pack& pack) {
  return dim3(unsigned((n + kColumns - 1) / kColumns), unsigned(pack.count));
}

}  // namespace

void batch_norm_forward(const float* X, float* Y, int m, int n, const BatchNormBuffers& bn,
                        const LayerSettings* layers, bool training, const Pack& pack,
                        cudaStream_t stream) {
  if (training)
    return launch{batch_norm_train_kernel, column_grid(n, pack), dim3(kThreads), stream}(
        X, Y, m, n, bn, layers, pack);
  const dim3 grid(blocks_for(int64_t(m) * n, kThreads).x, unsigned(pack.count));
  launch{batch_norm_infer_kernel, grid, dim3(kThreads), stream}(X, Y, m, n, bn, layers, pack);
}

void batch_norm_backward(const float* X, const float* dY, float* dX, int m, int n,
                         const BatchNormBuffers& bn, const Through& below, const Pack& pack,
                         cudaStream_t stream) {
  launch{batch_norm_backward_kernel, column_grid(n, pack), dim3(kThreads), stream}(X, dY, dX, m, n,
                                                                                   bn, below, pack);
}

}  // namespace mf::MF_TARGET
