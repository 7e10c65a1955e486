// Element-wise activation kernels, a pack's members along grid.y. Must equal: layers_cpu.cpp's
// activation_forward and activation_backward, and dense_cpu.cpp's epilogue. Checked by:
// tests/parity/test_kernel_parity.cpp (DenseParity.ForwardWithEveryActivation,
// KernelParity.Activations, PackParity.*).
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

constexpr int kThreads = 256;

__global__ void activation_forward_kernel(const float* X, float* Y, int64_t count, Activation act,
                                          Pack pack) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int z = int(blockIdx.y);
  if (i < count && !stopped(pack, z))
    member(Y, z, pack.stride)[i] = activate(act, member(X, z, pack.data_stride)[i]);
}

// dX = dY ⊙ own' then through below; dX may alias dY.
__global__ void activation_backward_kernel(const float* dY, float* dX, int64_t count, Through own,
                                           Through below, Pack pack) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int z = int(blockIdx.y);
  if (i < count && !stopped(pack, z))
    member(dX, z, pack.stride)[i] =
        member_through(below, z, pack.stride)
            .apply(member_through(own, z, pack.stride).apply(member(dY, z, pack.stride)[i], i), i);
}

// Y(m,n) = act(Y + bias(n)), Z = Y + bias: the epilogue for products computed by cuBLAS.
__global__ void bias_activation_kernel(float* Y, const float* bias, float* Z, int m, int n,
                                       Activation act, Pack pack) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int z = int(blockIdx.y);
  if (i >= int64_t(m) * n || stopped(pack, z)) return;
  float* y = member(Y, z, pack.stride);
  const float v = bias ? y[i] + member(bias, z, pack.stride)[i % n] : y[i];
  if (Z) member(Z, z, pack.stride)[i] = v;
  y[i] = activate(act, v);
}

dim3 member_grid(int64_t count, const Pack& pack) {
  return dim3(blocks_for(count, kThreads).x, unsigned(pack.count));
}

}  // namespace

void activation_forward(const float* X, float* Y, int64_t count, Activation act, const Pack& pack,
                        cudaStream_t stream) {
  launch{activation_forward_kernel, member_grid(count, pack), dim3(kThreads), stream}(X, Y, count,
                                                                                      act, pack);
}

void activation_backward(const float* dY, float* dX, int64_t count, const Through& own,
                         const Through& below, const Pack& pack, cudaStream_t stream) {
  launch{activation_backward_kernel, member_grid(count, pack), dim3(kThreads), stream}(
      dY, dX, count, own, below, pack);
}

void bias_activation(float* Y, const float* bias, float* Z, int m, int n, Activation act,
                     const Pack& pack, cudaStream_t stream) {
  launch{bias_activation_kernel, member_grid(int64_t(m) * n, pack), dim3(kThreads), stream}(
      Y, bias, Z, m, n, act, pack);
}

}  // namespace mf::MF_TARGET
