// The fused loss pass: one thread per row runs loss_row(), and its variant from probabilities
// for the cuDNN softmax reference path. Must equal: loss_cpu.cpp (the same loss_row()).
// Checked by: tests/parity/test_kernel_parity.cpp (KernelParity.LossesAndGradients), tests/gpu (GpuCudnn).
#include "kernels/kernels.h"
#include "kernels/loss_row.h"

namespace mf::MF_TARGET {
namespace {

constexpr int kThreads = 128;

__global__ void loss_kernel(Loss loss, const float* out, const float* target, float* d_out, float* row_loss,
                            float* row_correct, int m, int n) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= m) return;
  loss_row(loss, out + r * n, target + r * target_cols(loss, n), d_out + r * n, n,
           loss_grad_scale(loss, m, n), row_loss[r], row_correct[r]);
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

void loss(Loss loss, const float* out, const float* target, float* d_out, float* row_loss, float* row_correct,
          int m, int n, cudaStream_t stream) {
  launch{loss_kernel, blocks_for(m, kThreads), dim3(kThreads), stream}(loss, out, target, d_out,
                                                                                   row_loss, row_correct, m, n);
}

}  // namespace mf::MF_TARGET
