// Dropout, forward and backward: one thread per element of a member's (m, n) batch, a pack's
// members along grid.y, each with its own seed, step count and rate; the input X at
// pack.data_stride (the data's, for a first layer), the rest at pack.stride. The mask is drawn
// again in backward from the same hash (kernels/layer_math.h), so nothing is stored for it. Must
// equal: layers_cpu.cpp. Checked by: tests/parity/test_kernel_parity.cpp (LayerParity.Dropout*),
// tests/parity/test_pack_parity.cpp.
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

constexpr int kThreads = 256;

__global__ void dropout_forward_kernel(const float* X, float* Y, int64_t count, int layer,
                                       const MemberSettings* settings, const LayerSettings* layers,
                                       Pack pack) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int z = int(blockIdx.y);
  if (i >= count || stopped(pack, z)) return;
  const LayerSettings& s = member(layers, z, pack.stride)[layer];
  const uint32_t key =
      dropout_key(member(settings, z, pack.stride)->seed, layer, steps_before(pack, z, false));
  member(Y, z, pack.stride)[i] = dropout(s, member(X, z, pack.data_stride)[i], key, i);
}

__global__ void dropout_backward_kernel(const float* dY, float* dX, int64_t count, int layer,
                                        const MemberSettings* settings, const LayerSettings* layers,
                                        Through below, Pack pack) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int z = int(blockIdx.y);
  if (i >= count || stopped(pack, z)) return;
  const LayerSettings& s = member(layers, z, pack.stride)[layer];
  below = member_through(below, z, pack.stride);
  const uint32_t key =
      dropout_key(member(settings, z, pack.stride)->seed, layer, steps_before(pack, z, true));
  const float g = dropout(s, member(dY, z, pack.stride)[i], key, i);
  member(dX, z, pack.stride)[i] = below.apply(g, i);
}

dim3 member_grid(int64_t count, const Pack& pack) {
  return dim3(blocks_for(count, kThreads).x, unsigned(pack.count));
}

}  // namespace

void dropout_forward(const float* X, float* Y, int m, int n, int layer,
                     const MemberSettings* settings, const LayerSettings* layers, const Pack& pack,
                     cudaStream_t stream) {
  const int64_t count = int64_t(m) * n;
  launch{dropout_forward_kernel, member_grid(count, pack), dim3(kThreads), stream}(
      X, Y, count, layer, settings, layers, pack);
}

void dropout_backward(const float* dY, float* dX, int m, int n, int layer,
                      const MemberSettings* settings, const LayerSettings* layers,
                      const Through& below, const Pack& pack, cudaStream_t stream) {
  const int64_t count = int64_t(m) * n;
  launch{dropout_backward_kernel, member_grid(count, pack), dim3(kThreads), stream}(
      dY, dX, count, layer, settings, layers, below, pack);
}

}  // namespace mf::MF_TARGET
