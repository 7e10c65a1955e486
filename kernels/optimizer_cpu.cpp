#include "kernels/optimizer_cpu.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "kernels/cpu_clones.h"

namespace mf::cpu {
namespace {

// Calls body(tensor, begin, end) for each block of [first, last): its tensor and its elements.
template <class Body>
[[gnu::always_inline]] inline void each_block(const OptimizerStep& s, int first, int last,
                                              Body body) {
  for (int block = first; block < last; ++block) {
    const int t = tensor_of_block(s.tensors, s.tensor_count, block);
    const ParamTensor& tensor = s.tensors[t];
    const int64_t begin = tensor.begin + int64_t(block - tensor.first_block) * kParamBlock;
    body(block, t, begin, std::min(begin + kParamBlock, tensor.begin + tensor.count));
  }
}

// The updates of one block's n parameters w (and their slots) with their gradients g: one loop,
// whose branches are on the pack's flags alone, so that it vectorizes.
template <OptimizerKind K>
[[gnu::always_inline]] inline void update(float* __restrict w, const float* __restrict g,
                                          float* const slot[3], int64_t n,
                                          const OptimizerSettings& o, const StepConstants& c,
                                          bool momentum_slot, bool amsgrad) {
  for (int64_t i = 0; i < n; ++i)
    optimizer_update(K, w[i], slot, i, g[i], o, c, momentum_slot, amsgrad);
}

// A member's step over blocks [first, last), as step_element (kernels/param_tensors.h) composes it,
// in passes over each block's elements: the gradient each update takes (regularized, then clipped),
// the weight decay, the update. Each pass's branches are outside its loop, and it reads copies of
// the step and the settings, which its stores cannot alias: every loop vectorizes.
template <OptimizerKind K>
[[gnu::always_inline]] inline void update_blocks(const OptimizerStep& shared, const MemberStep& b,
                                                 double* penalty, int first, int last) {
  const OptimizerStep s = shared;
  const OptimizerSettings o = b.settings->optimizer;
  const int64_t t = b.state->t;
  const StepConstants c = step_constants(K, o, t, b.state->nadam_product[(t - 1) & 1]);
  for (int block = first; block < last;
       ++block) {  // not each_block: a lambda would leave the clone's ISA
    const int tensor = tensor_of_block(s.tensors, s.tensor_count, block);
    const ParamTensor& p = s.tensors[tensor];
    const int64_t begin = p.begin + int64_t(block - p.first_block) * kParamBlock;
    const int64_t n = std::min<int64_t>(kParamBlock, p.begin + p.count - begin);
    float* __restrict w = b.params + begin;
    const float* __restrict loss_grad = b.grads + begin;
    const Regularizer r = regularizer_of(s.tensors[tensor], b.layers);
    if (s.regularized) {  // the penalty of the weights before the update, for the loss
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += regularizer_penalty(w[i], r.l1, r.l2);
      penalty[block] = sum;
    }
    float g[kParamBlock];
    if (s.regularized && r.any()) {
      for (int64_t i = 0; i < n; ++i) g[i] = loss_grad[i] + regularizer_grad(w[i], r.l1, r.l2);
    } else {
      for (int64_t i = 0; i < n; ++i) g[i] = loss_grad[i];
    }
    if (s.clip != ClipKind::none) {
      const float norm = clip_norm(s, b, tensor);
      for (int64_t i = 0; i < n; ++i) g[i] = clipped(s.clip, g[i], o.clip, norm);
    }
    if (o.weight_decay != 0.f)
      for (int64_t i = 0; i < n; ++i) decay_weight(w[i], o, c.lr);
    float* const slot[3] = {b.slot[0] ? b.slot[0] + begin : nullptr,
                            b.slot[1] ? b.slot[1] + begin : nullptr,
                            b.slot[2] ? b.slot[2] + begin : nullptr};
    update<K>(w, g, slot, n, o, c, s.momentum_slot, s.amsgrad);
  }
}

// Optimizer K's loop where the step's kind is K: one instantiation per kind up to kOptimizerCount.
// A fold of calls, not a lambda, so that each is inlined into the clone that calls it.
template <int... Kinds>
[[gnu::always_inline]] inline void update_kind(const OptimizerStep& s, const MemberStep& b,
                                               double* penalty, int first, int last,
                                               std::integer_sequence<int, Kinds...>) {
  ((s.kind == OptimizerKind(Kinds)
        ? (update_blocks<OptimizerKind(Kinds)>(s, b, penalty, first, last), true)
        : false) ||
   ...);
}

}  // namespace

// One loop per optimizer, each compiled for every CPU width (kernels/cpu_clones.h).
MF_CPU_CLONES void optimizer_blocks(const OptimizerStep& s, const MemberStep& b, double* penalty,
                                    int first, int last) {
  update_kind(s, b, penalty, first, last, std::make_integer_sequence<int, kOptimizerCount>());
}

void norm_partials(const OptimizerStep& s, const MemberStep& b, double* partials, int first,
                   int last) {
  each_block(s, first, last, [&](int block, int tensor, int64_t begin, int64_t end) {
    const Regularizer r = regularizer_of(s.tensors[tensor], b.layers);
    double sum = 0;
    for (int64_t i = begin; i < end; ++i) {
      const float g = regularized_grad(s, r, b.grads[i], b.params[i]);
      sum += double(g) * g;
    }
    partials[block] = sum;
  });
}

void finish_norms(const OptimizerStep& s, const double* partials, float* norms) {
  double total = 0;
  for (int t = 0; t < s.tensor_count; ++t) {
    const ParamTensor& tensor = s.tensors[t];
    double sum = 0;
    for (int k = 0; k < param_blocks(tensor.count); ++k) sum += partials[tensor.first_block + k];
    norms[t] = std::sqrt(float(sum));
    total += sum;
  }
  norms[s.tensor_count] = std::sqrt(float(total));
}

void weight_penalty(const OptimizerStep& s, const MemberStep& b, double* penalty, int first,
                    int last) {
  each_block(s, first, last, [&](int block, int tensor, int64_t begin, int64_t end) {
    const Regularizer r = regularizer_of(s.tensors[tensor], b.layers);
    double sum = 0;
    for (int64_t i = begin; i < end; ++i) sum += regularizer_penalty(b.params[i], r.l1, r.l2);
    penalty[block] = sum;
  });
}

}  // namespace mf::cpu
