// The optimizer step and the passes beside it, over a pack's flat parameter buffers: a block per
// kParamBlock elements of one tensor (kernels/param_tensors.h), the members along grid.y, each with
// its own settings. The update itself is kernels/optimizer_math.h's, shared. Must equal:
// optimizer_cpu.cpp. Checked by: tests/parity/test_kernel_parity.cpp (KernelParity.Optimizer*,
// PackParity.*).
#include <stdexcept>
#include <utility>

#include "kernels/block_sums.h"
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

static_assert(kParamBlock == kBlockThreads, "a block is one thread per element");

// The block's tensor, and this thread's element of it (valid: inside the tensor).
struct BlockElement {
  int tensor;
  int64_t i;
  bool valid;
};
__device__ __forceinline__ BlockElement block_element(const OptimizerStep& s) {
  const int t = tensor_of_block(s.tensors, s.tensor_count, int(blockIdx.x));
  const ParamTensor& tensor = s.tensors[t];
  const int64_t offset = int64_t(int(blockIdx.x) - tensor.first_block) * kParamBlock + threadIdx.x;
  return {t, tensor.begin + offset, offset < tensor.count};
}

template <OptimizerKind K>
__global__ void optimizer_kernel(OptimizerStep s, Pack pack) {
  const int z = int(blockIdx.y);
  if (stopped(pack, z)) return;  // the whole block: its member's
  const MemberStep b = member_step(s, z, pack);
  const BlockElement e = block_element(s);
  const Regularizer r = regularizer_of(s.tensors[e.tensor], b.layers);
  double penalty = 0;
  if (e.valid) {
    const int64_t t = b.state->t;
    const OptimizerSettings& o = b.settings->optimizer;
    const StepConstants c = step_constants(K, o, t, b.state->nadam_product[(t - 1) & 1]);
    // before the update
    if (s.regularized) penalty = regularizer_penalty(b.params[e.i], r.l1, r.l2);
    step_element(K, s, o, c, r, clip_norm(s, b, e.tensor), b.params, b.grads, b.slot, e.i);
  }
  if (s.regularized) {  // the same for every thread of the launch
    const double sum = block_sum(penalty);
    if (threadIdx.x == 0) member(s.penalty, z, pack.stride)[blockIdx.x] = sum;
  }
  // Nothing else of the launch reads first_row, and no block reads the Nadam slot this one writes.
  if (blockIdx.x == 0 && threadIdx.x == 0) finish_member_step(s, b);
}

// Each block's sum of its squared gradients (with their regularizers'): the norms' partials.
__global__ void norm_partials_kernel(OptimizerStep s, Pack pack) {
  const int z = int(blockIdx.y);
  if (stopped(pack, z)) return;  // the whole block: its member's
  const MemberStep b = member_step(s, z, pack);
  const BlockElement e = block_element(s);
  double square = 0;
  if (e.valid) {
    const float g = regularized_grad(s, regularizer_of(s.tensors[e.tensor], b.layers), b.grads[e.i],
                                     b.params[e.i]);
    square = double(g) * g;
  }
  const double sum = block_sum(square);
  if (threadIdx.x == 0) member(s.norm_partials, z, pack.stride)[blockIdx.x] = sum;
}

// One block per member: each tensor's norm from its blocks' partials, in order, then the global
// one.
__global__ void finish_norms_kernel(OptimizerStep s, Pack pack) {
  const int z = int(blockIdx.y);
  if (stopped(pack, z)) return;  // the whole block: its member's
  const double* partials = member(s.norm_partials, z, pack.stride);
  float* norms = member(s.norms, z, pack.stride);
  double total = 0;
  for (int t = 0; t < s.tensor_count; ++t) {
    const ParamTensor& tensor = s.tensors[t];
    const double sum = block_sum_of(partials + tensor.first_block, param_blocks(tensor.count));
    if (threadIdx.x == 0) norms[t] = sqrtf(float(sum));
    total += sum;
  }
  if (threadIdx.x == 0) norms[s.tensor_count] = sqrtf(float(total));
}

__global__ void weight_penalty_kernel(OptimizerStep s, Pack pack) {
  const int z = int(blockIdx.y);
  if (stopped(pack, z)) return;  // the whole block: its member's
  const MemberStep b = member_step(s, z, pack);
  const BlockElement e = block_element(s);
  const Regularizer r = regularizer_of(s.tensors[e.tensor], b.layers);
  const double penalty = e.valid ? regularizer_penalty(b.params[e.i], r.l1, r.l2) : 0.0;
  const double sum = block_sum(penalty);
  if (threadIdx.x == 0) member(s.penalty, z, pack.stride)[blockIdx.x] = sum;
}

dim3 member_grid(const OptimizerStep& s, const Pack& pack) {
  return dim3(unsigned(s.blocks), unsigned(pack.count));
}

template <OptimizerKind K>
void launch_step(const OptimizerStep& s, const Pack& pack, cudaStream_t stream) {
  launch{optimizer_kernel<K>, member_grid(s, pack), dim3(kParamBlock), stream}(s, pack);
}

// The kernel of s.kind, one instantiation per optimizer of kernels/optimizer_math.h.
template <int... Kinds>
void launch_step_of(const OptimizerStep& s, const Pack& pack, cudaStream_t stream,
                    std::integer_sequence<int, Kinds...>) {
  ((int(s.kind) == Kinds && (launch_step<OptimizerKind(Kinds)>(s, pack, stream), true)) || ...);
}

}  // namespace

void optimizer_step(const OptimizerStep& s, const Pack& pack, cudaStream_t stream) {
  if (!pack.step)
    throw std::invalid_argument(
        "optimizer_step: no step state (Pack::step) to take the step count from");
  launch_step_of(s, pack, stream, std::make_integer_sequence<int, kOptimizerCount>());
}

void gradient_norms(const OptimizerStep& s, const Pack& pack, cudaStream_t stream) {
  launch{norm_partials_kernel, member_grid(s, pack), dim3(kParamBlock), stream}(s, pack);
  launch{finish_norms_kernel, dim3(1, unsigned(pack.count)), dim3(kBlockThreads), stream}(s, pack);
}

void weight_penalty(const OptimizerStep& s, const Pack& pack, cudaStream_t stream) {
  launch{weight_penalty_kernel, member_grid(s, pack), dim3(kParamBlock), stream}(s, pack);
}

}  // namespace mf::MF_TARGET
