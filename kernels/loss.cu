// The fused loss pass: one thread per row runs loss_row(), and its variant from probabilities
// for the cuDNN softmax reference path; for a batch of at most kAccumulateThreads rows, the metric
// accumulation rides in the same launch. A pack's members run along grid.y, each on its own
// buffers and loss settings. Must equal: loss_cpu.cpp (the same loss_row(), accumulate).
// Checked by: tests/parity/test_kernel_parity.cpp (KernelParity.LossesAndGradients,
// KernelParity.LossAndAccumulateInOneLaunch, PackParity.*), tests/gpu (GpuCudnn).
#include "kernels/block_sums.h"
#include "kernels/kernels.h"
#include "kernels/loss_row.h"

namespace mf::MF_TARGET {
namespace {

constexpr int kThreads = 128;

// One member's operands of the loss pass.
struct LossBuffers {
  const float* out;
  const float* target;
  float *d_out, *values;
  double* totals;
  const int* rows;
  const MemberSettings* settings;

  __device__ __forceinline__ LossBuffers of_member(int z, const Pack& pack) const {
    return {member(out, z, pack.stride),
            member(target, z, pack.data_stride),
            member(d_out, z, pack.stride),
            member(values, z, pack.stride),
            member(totals, z, pack.stride),
            rows ? member(rows, z, pack.rows_stride) + first_row(pack, z) : nullptr,
            member(settings, z, pack.stride)};
  }
  // Row r's loss, metrics and gradient; its targets are row r of a gathered batch, or row
  // rows[r] of the data set (rows already at the batch's first row).
  __device__ __forceinline__ void row(const LossShape& shape, int64_t r, int m, int n) const {
    loss_row(shape, settings->loss, out + r * n,
             target + (rows ? rows[r] : r) * int64_t(shape.target_stride()), d_out + r * n, n,
             loss_grad_scale(shape.loss, m, n), values + r * shape.values());
  }
};

__global__ void loss_kernel(LossShape shape, LossBuffers buffers, int m, int n, Pack pack) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < m && !stopped(pack, int(blockIdx.y)))
    buffers.of_member(int(blockIdx.y), pack).row(shape, r, m, n);
}

// One block per member, a thread per row (m <= kAccumulateThreads), then the block's sums into
// totals: each thread holds one row, so the additions are accumulate_kernel's exactly. It counts a
// training step, as accumulate_kernel does.
__global__ void loss_accumulate_kernel(LossShape shape, LossBuffers buffers, int m, int n,
                                       Pack pack) {
  const int z = int(blockIdx.y);
  if (stopped(pack, z)) return;  // the whole block: its member's
  const LossBuffers b = buffers.of_member(z, pack);
  const int r = int(threadIdx.x);
  if (r == 0) count_step(pack, z);  // nothing else here reads the count
  const int count = shape.values();
  double sums[kMaxValues] = {};
  if (r < m) {
    b.row(shape, r, m, n);
    for (int v = 0; v < count; ++v) sums[v] = b.values[int64_t(r) * count + v];
  }
  add_block_sums(sums, count, b.totals);
}

__global__ void crossentropy_from_probabilities_kernel(LossShape shape, LossBuffers buffers, int m,
                                                       int n, Pack pack) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= m || stopped(pack, int(blockIdx.y))) return;
  const LossBuffers b = buffers.of_member(int(blockIdx.y), pack);
  crossentropy_row_from_probabilities(
      shape, b.out + r * n, b.target + r * shape.target_stride(), b.d_out + r * n, n,
      loss_grad_scale(Loss::sparse_categorical_crossentropy, m, n), b.values + r * shape.values());
}

dim3 row_grid(int m, const Pack& pack) {
  return dim3(blocks_for(m, kThreads).x, unsigned(pack.count));
}

}  // namespace

void crossentropy_from_probabilities(const LossShape& shape, const float* probabilities,
                                     const float* target, float* d_out, float* values, int m, int n,
                                     const Pack& pack, cudaStream_t stream) {
  const LossBuffers buffers{probabilities, target, d_out, values, nullptr, nullptr, nullptr};
  launch{crossentropy_from_probabilities_kernel, row_grid(m, pack), dim3(kThreads), stream}(
      shape, buffers, m, n, pack);
}

void loss_and_accumulate(const LossShape& shape, const float* out, const float* target,
                         float* d_out, float* values, int m, int n, double* totals,
                         const MemberSettings* settings, const int* rows, const Pack& pack,
                         cudaStream_t stream) {
  const LossBuffers buffers{out, target, d_out, values, totals, rows, settings};
  if (m > kAccumulateThreads) {
    launch{loss_kernel, row_grid(m, pack), dim3(kThreads), stream}(shape, buffers, m, n, pack);
    return accumulate(values, shape.values(), m, totals, pack, stream);
  }
  launch{loss_accumulate_kernel, dim3(1, unsigned(pack.count)), dim3(kAccumulateThreads), stream}(
      shape, buffers, m, n, pack);
}

void loss(const LossShape& shape, const float* out, const float* target, float* d_out,
          float* values, int m, int n, const MemberSettings* settings, const Pack& pack,
          cudaStream_t stream) {
  const LossBuffers buffers{out, target, d_out, values, nullptr, nullptr, settings};
  launch{loss_kernel, row_grid(m, pack), dim3(kThreads), stream}(shape, buffers, m, n, pack);
}

}  // namespace mf::MF_TARGET
