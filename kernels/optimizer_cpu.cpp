#include "kernels/optimizer_cpu.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu_clones.h"

namespace mf::cpu {
namespace {

// Calls body(tensor, begin, end) for each block of [first, last): its tensor and its elements.
template <class Body>
[[gnu::always_inline]] inline void each_block(const OptimizerStep& s, int first, int last, Body body) {
  for (int block = first; block < last; ++block) {
    const int t = tensor_of_block(s.tensors, s.tensor_count, block);
    const ParamTensor& tensor = s.tensors[t];
    const int64_t begin = tensor.begin + int64_t(block - tensor.first_block) * kParamBlock;
    body(block, t, begin, std::min(begin + kParamBlock, tensor.begin + tensor.count));
  }
}

template <OptimizerKind K>
[[gnu::always_inline]] inline void update_blocks(const OptimizerStep& s, const MemberStep& b, double* penalty,
                                                 int first, int last) {
  const int64_t t = b.state->t;
  const StepConstants c = step_constants(K, b.settings->optimizer, t, b.state->nadam_product[(t - 1) & 1]);
  each_block(s, first, last, [&](int block, int tensor, int64_t begin, int64_t end) {
    const Regularizer r = regularizer_of(s.tensors[tensor], b.layers);
    const float norm = clip_norm(s, b, tensor);
    double sum = 0;
    for (int64_t i = begin; i < end; ++i) sum += step_element(K, s, b, r, c, norm, i);
    if (s.regularized) penalty[block] = sum;
  });
}

}  // namespace

// One loop per optimizer, each compiled for every CPU width (kernels/cpu_clones.h).
MF_CPU_CLONES void optimizer_blocks(const OptimizerStep& s, const MemberStep& b, double* penalty, int first, int last) {
  switch (s.kind) {
    case OptimizerKind::adam: return update_blocks<OptimizerKind::adam>(s, b, penalty, first, last);
    case OptimizerKind::sgd: return update_blocks<OptimizerKind::sgd>(s, b, penalty, first, last);
    case OptimizerKind::rmsprop: return update_blocks<OptimizerKind::rmsprop>(s, b, penalty, first, last);
    case OptimizerKind::adamw: return update_blocks<OptimizerKind::adamw>(s, b, penalty, first, last);
    case OptimizerKind::adagrad: return update_blocks<OptimizerKind::adagrad>(s, b, penalty, first, last);
    case OptimizerKind::adamax: return update_blocks<OptimizerKind::adamax>(s, b, penalty, first, last);
    case OptimizerKind::nadam: return update_blocks<OptimizerKind::nadam>(s, b, penalty, first, last);
  }
}

void norm_partials(const OptimizerStep& s, const MemberStep& b, double* partials, int first, int last) {
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

void weight_penalty(const OptimizerStep& s, const MemberStep& b, double* penalty, int first, int last) {
  each_block(s, first, last, [&](int block, int tensor, int64_t begin, int64_t end) {
    const Regularizer r = regularizer_of(s.tensors[tensor], b.layers);
    double sum = 0;
    for (int64_t i = begin; i < end; ++i) sum += regularizer_penalty(b.params[i], r.l1, r.l2);
    penalty[block] = sum;
  });
}

}  // namespace mf::cpu
