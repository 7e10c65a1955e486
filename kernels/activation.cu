// Element-wise activation kernels. Must equal: dense_cpu.cpp's epilogue and activation_backward.
// Checked by: tests/parity/test_kernel_parity.cpp (DenseParity.ForwardWithEveryActivation, KernelParity.ActivationBackward).
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

constexpr int kThreads = 256;

// dZ = dY ⊙ act'(Y), from the layer's output; dZ may alias dY.
__global__ void activation_backward_kernel(const float* Y, const float* dY, float* dZ, int64_t count,
                                           Activation act) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) dZ[i] = dY[i] * activation_grad_from_output(act, Y[i]);
}

// Y(m,n) = act(Y + bias(n)): the epilogue for products computed by cuBLAS.
__global__ void bias_activation_kernel(float* Y, const float* bias, int m, int n, Activation act) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < int64_t(m) * n) Y[i] = activate(act, Y[i] + bias[i % n]);
}

}  // namespace

void activation_backward(const float* Y, const float* dY, float* dZ, int64_t count, Activation act,
                         cudaStream_t stream) {
  launch{activation_backward_kernel, blocks_for(count, kThreads), dim3(kThreads), stream}(Y, dY, dZ, count, act);
}

void bias_activation(float* Y, const float* bias, int m, int n, Activation act, cudaStream_t stream) {
  launch{bias_activation_kernel, blocks_for(int64_t(m) * n, kThreads), dim3(kThreads), stream}(Y, bias, m, n, act);
}

}  // namespace mf::MF_TARGET
