// The fused loss pass: one thread per row runs loss_row(), and its variant from probabilities
// for the cuDNN softmax reference path; for a batch of at most kAccumulateThreads rows, the metric
// accumulation rides in the same launch. Must equal: loss_cpu.cpp (the same loss_row(), accumulate).
// Checked by: tests/parity/test_kernel_parity.cpp (KernelParity.LossesAndGradients,
// KernelParity.LossAndAccumulateInOneLaunch), tests/gpu (GpuCudnn).
#include "kernels/block_sums.h"
#include "kernels/kernels.h"
#include "kernels/loss_row.h"

namespace mf::MF_TARGET {
namespace {

constexpr int kThreads = 128;

// Row r's targets: row r of a gathered batch, or row target_rows[r] of the data set.
__device__ __forceinline__ const float* targets_of(const float* target, const int* target_rows, int64_t r, int cols) {
  return target + (target_rows ? target_rows[r] : r) * int64_t(cols);
}

__global__ void loss_kernel(Loss loss, const float* out, const float* target, float* d_out, float* row_loss,
                            float* row_correct, int m, int n, const int* target_rows) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= m) return;
  loss_row(loss, out + r * n, targets_of(target, target_rows, r, target_cols(loss, n)), d_out + r * n, n,
           loss_grad_scale(loss, m, n), row_loss[r], row_correct[r]);
}

// One block, a thread per row (m <= kAccumulateThreads), then the block's sums into totals: each
// thread holds one row, so the additions are accumulate_kernel's exactly.
__global__ void loss_accumulate_kernel(Loss loss, const float* out, const float* target, float* d_out,
                                       float* row_loss, float* row_correct, int m, int n, double* totals,
                                       const int* target_rows) {
  const int r = int(threadIdx.x);
  double row = 0, correct = 0;
  if (r < m) {
    loss_row(loss, out + int64_t(r) * n, targets_of(target, target_rows, r, target_cols(loss, n)),
             d_out + int64_t(r) * n, n, loss_grad_scale(loss, m, n), row_loss[r], row_correct[r]);
    row = row_loss[r];
    correct = row_correct[r];
  }
  add_block_sums(row, correct, totals);
}

__global__ void crossentropy_from_probabilities_kernel(const float* p, const float* target, float* d_out,
                                                      float* row_loss, float* row_correct, int m, int n) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= m) return;
  crossentropy_row_from_probabilities(p + r * n, int(target[r]), d_out + r * n, n,
                                      loss_grad_scale(Loss::sparse_categorical_crossentropy, m, n), row_loss[r],
                                      row_correct[r]);
}

}  // namespace

void crossentropy_from_probabilities(const float* probabilities, const float* target, float* d_out,
                                     float* row_loss, float* row_correct, int m, int n, cudaStream_t stream) {
  launch{crossentropy_from_probabilities_kernel, blocks_for(m, kThreads), dim3(kThreads), stream}(
      probabilities, target, d_out, row_loss, row_correct, m, n);
}

void loss_and_accumulate(Loss loss, const float* out, const float* target, float* d_out, float* row_loss,
                         float* row_correct, int m, int n, double* totals, const int* target_rows,
                         cudaStream_t stream) {
  if (m > kAccumulateThreads) {
    launch{loss_kernel, blocks_for(m, kThreads), dim3(kThreads), stream}(loss, out, target, d_out, row_loss,
                                                                         row_correct, m, n, target_rows);
    return accumulate(row_loss, row_correct, m, totals, stream);
  }
  launch{loss_accumulate_kernel, dim3(1), dim3(kAccumulateThreads), stream}(loss, out, target, d_out, row_loss,
                                                                             row_correct, m, n, totals, target_rows);
}

void loss(Loss loss, const float* out, const float* target, float* d_out, float* row_loss, float* row_correct,
          int m, int n, cudaStream_t stream) {
  launch{loss_kernel, blocks_for(m, kThreads), dim3(kThreads), stream}(loss, out, target, d_out, row_loss,
                                                                       row_correct, m, n, nullptr);
}

}  // namespace mf::MF_TARGET
