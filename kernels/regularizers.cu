// The regularizers' penalties on the loss (keras.regularizers): an activity regularizer's on a
// layer's output (its partial sums, and its gradient added in backward), and the sum of every
// penalty's partials into the batch's loss. Partial sums are per block of kParamBlock elements,
// each block's a fixed tree (kernels/block_sums.h): deterministic. Must equal: layers_cpu.cpp.
// Checked by: tests/parity/test_kernel_parity.cpp (LayerParity.Regularizers*),
// tests/parity/test_pack_parity.cpp.
#include "kernels/block_sums.h"
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

static_assert(kParamBlock == kBlockThreads, "a block's partial sum is one thread's element each");

__global__ void activity_penalty_kernel(const float* Y, int64_t count, int layer,
                                        const LayerSettings* layers, double* partials, Pack pack) {
  const int z = int(blockIdx.y);
  if (stopped(pack, z)) return;  // the whole block: its member's
  const int64_t i = int64_t(blockIdx.x) * kParamBlock + threadIdx.x;
  const Regularizer r = member(layers, z, pack.stride)[layer].activity;
  const double penalty =
      i < count ? regularizer_penalty(member(Y, z, pack.stride)[i], r.l1, r.l2) : 0.0;
  const double sum = block_sum(penalty);
  if (threadIdx.x == 0) member(partials, z, pack.stride)[blockIdx.x] = sum;
}

__global__ void activity_backward_kernel(const float* dY, float* dX, int64_t count, int m,
                                         int layer, const LayerSettings* layers, Through own,
                                         Pack pack) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int z = int(blockIdx.y);
  if (i >= count || stopped(pack, z)) return;
  const Regularizer r = member(layers, z, pack.stride)[layer].activity;
  own = member_through(own, z, pack.stride);
  const float g = member(dY, z, pack.stride)[i] + regularizer_grad(own.y[i], r.l1, r.l2) / float(m);
  member(dX, z, pack.stride)[i] = own.apply(g, i);
}

__global__ void add_penalty_kernel(const double* weight_partials, int weight_blocks,
                                   const double* activity_partials, int activity_blocks, int m,
                                   double* totals, Pack pack) {
  const int z = int(blockIdx.y);
  if (stopped(pack, z)) return;  // the whole block: its member's
  const double weights = block_sum_of(member(weight_partials, z, pack.stride), weight_blocks);
  const double activity = block_sum_of(member(activity_partials, z, pack.stride), activity_blocks);
  if (threadIdx.x == 0) member(totals, z, pack.stride)[0] += double(m) * weights + activity;
}

}  // namespace

void activity_penalty(const float* Y, int m, int n, int layer, const LayerSettings* layers,
                      double* partials, int blocks, const Pack& pack, cudaStream_t stream) {
  launch{activity_penalty_kernel, dim3(unsigned(blocks), unsigned(pack.count)), dim3(kParamBlock),
         stream}(Y, int64_t(m) * n, layer, layers, partials, pack);
}

void activity_backward(const float* dY, float* dX, int m, int n, int layer,
                       const LayerSettings* layers, const Through& own, const Pack& pack,
                       cudaStream_t stream) {
  const int64_t count = int64_t(m) * n;
  const dim3 grid(blocks_for(count, kBlockThreads).x, unsigned(pack.count));
  launch{activity_backward_kernel, grid, dim3(kBlockThreads), stream}(dY, dX, count, m, layer,
                                                                      layers, own, pack);
}

void add_penalty(const double* weight_partials, int weight_blocks, const double* activity_partials,
                 int activity_blocks, int m, double* totals, const Pack& pack,
                 cudaStream_t stream) {
  launch{add_penalty_kernel, dim3(1, unsigned(pack.count)), dim3(kBlockThreads), stream}(
      weight_partials, weight_blocks, activity_partials, activity_blocks, m, totals, pack);
}

}  // namespace mf::MF_TARGET
