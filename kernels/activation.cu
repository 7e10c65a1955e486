// Element-wise activation kernels, a pack's members along grid.y. Must equal: dense_cpu.cpp's
// epilogue and activation_backward. Checked by: tests/parity/test_kernel_parity.cpp
// (DenseParity.ForwardWithEveryActivation, KernelParity.ActivationBackward, PackParity.*).
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

constexpr int kThreads = 256;

// dZ = dY ⊙ act'(Y), from the layer's output; dZ may alias dY.
__global__ void activation_backward_kernel(const float* Y, const float* dY, float* dZ, int64_t count,
                                           Activation act, Pack pack) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int z = int(blockIdx.y);
  if (i < count)
    member(dZ, z, pack.stride)[i] = member(dY, z, pack.stride)[i] *
                                    activation_grad_from_output(act, member(Y, z, pack.stride)[i]);
}

// Y(m,n) = act(Y + bias(n)): the epilogue for products computed by cuBLAS.
__global__ void bias_activation_kernel(float* Y, const float* bias, int m, int n, Activation act, Pack pack) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int z = int(blockIdx.y);
  float* y = member(Y, z, pack.stride);
  if (i < int64_t(m) * n) y[i] = activate(act, y[i] + member(bias, z, pack.stride)[i % n]);
}

dim3 member_grid(int64_t count, const Pack& pack) { return dim3(blocks_for(count, kThreads).x, unsigned(pack.count)); }

}  // namespace

void activation_backward(const float* Y, const float* dY, float* dZ, int64_t count, Activation act,
                         const Pack& pack, cudaStream_t stream) {
  launch{activation_backward_kernel, member_grid(count, pack), dim3(kThreads), stream}(Y, dY, dZ, count, act, pack);
}

void bias_activation(float* Y, const float* bias, int m, int n, Activation act, const Pack& pack,
                     cudaStream_t stream) {
  launch{bias_activation_kernel, member_grid(int64_t(m) * n, pack), dim3(kThreads), stream}(Y, bias, m, n, act, pack);
}

}  // namespace mf::MF_TARGET
