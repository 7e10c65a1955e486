#pragma once
// A model's trainable tensors in its flat parameter buffer, and the blocks in which the passes over
// every parameter (the optimizer step, the weight regularizers' penalty, the gradients' norms for
// clipping) visit them: each block holds kParamBlock elements of one tensor only, so each knows its
// tensor's regularizer and its partial sum belongs to one tensor. Pure functions of the model's
// shape: the CPU backend visits the same blocks in the same order.
#include <cstdint>

#include "kernels/hd.h"
#include "kernels/layer_math.h"
#include "kernels/member_settings.h"
#include "kernels/optimizer_math.h"
#include "kernels/pack.h"

namespace mf {

// What a tensor is to its layer (Keras's order within a layer's weights).
enum class TensorRole : int { kernel = 0, bias = 1, gamma = 2, beta = 3 };

struct ParamTensor {
  int64_t begin = 0, count = 0;  // its floats in the flat parameter buffer
  int layer = 0;                 // its layer's index in the spec (the LayerSettings entry)
  TensorRole role = TensorRole::kernel;
  int first_block = 0;  // its first block; its blocks are param_blocks(count) from there
};

inline constexpr int kParamBlock = 256;  // elements per block, one per thread of a CUDA block
MF_HD int param_blocks(int64_t count) { return int((count + kParamBlock - 1) / kParamBlock); }

// The tensor block `block` belongs to: the last whose first_block is at most `block`.
MF_HD int tensor_of_block(const ParamTensor* tensors, int count, int block) {
  int low = 0, high = count - 1;
  while (low < high) {
    const int mid = (low + high + 1) / 2;
    if (tensors[mid].first_block <= block)
      low = mid;
    else
      high = mid - 1;
  }
  return low;
}

// The penalty a tensor's elements carry: its Dense layer's kernel or bias regularizer; none for a
// batch normalization's gamma and beta.
MF_HD Regularizer regularizer_of(const ParamTensor& t, const LayerSettings* layers) {
  if (t.role == TensorRole::kernel) return layers[t.layer].kernel;
  if (t.role == TensorRole::bias) return layers[t.layer].bias;
  return {};
}

// One optimizer step over a pack's flat parameter buffers (member 0's pointers; the others at the
// pack's stride), and the passes beside it. What the members share is here; what each has of its
// own is in its MemberSettings and LayerSettings.
struct OptimizerStep {
  OptimizerKind kind = OptimizerKind::adam;
  ClipKind clip = ClipKind::none;
  bool momentum_slot = false;  // SGD and RMSprop with momentum
  bool amsgrad = false;        // Adam, AdamW
  // some tensor has a regularizer: the step writes the penalty's partials
  bool regularized = false;
  float* params = nullptr;
  const float* grads = nullptr;
  float* slot[3] = {};  // the optimizer's state, optimizer_slots() of them, each of `count` floats
  int64_t count = 0;
  const ParamTensor* tensors = nullptr;  // the model's table (every member has the same)
  int tensor_count = 0, blocks = 0;      // blocks: the last tensor's first_block plus its blocks
  const MemberSettings* settings = nullptr;
  const LayerSettings* layers = nullptr;
  // Clipping by norm: each block's sum of squared gradients (`blocks` doubles), then each tensor's
  // L2 norm and after them the global one (tensor_count + 1 floats).
  double* norm_partials = nullptr;
  float* norms = nullptr;
  // With regularizers: each block's penalty before the update (`blocks` doubles), for the loss.
  double* penalty = nullptr;
  int batch_rows = 0;  // the step moves each member's first_row past its batch
};

// The gradient the update takes: the loss's g plus its regularizer's (Keras differentiates the
// loss with the penalty added).
MF_HD float regularized_grad(const OptimizerStep& s, const Regularizer& r, float g, float w) {
  return s.regularized && r.any() ? g + regularizer_grad(w, r.l1, r.l2) : g;
}

// One member's buffers of a step (the step's pointers moved to member z's copies).
struct MemberStep {
  float* params;
  const float* grads;
  float* slot[3];
  const MemberSettings* settings;
  const LayerSettings* layers;
  const float* norms;
  StepState* state;
};

MF_HD MemberStep member_step(const OptimizerStep& s, int z, const Pack& pack) {
  return {member(s.params, z, pack.stride),
          member(s.grads, z, pack.stride),
          {member(s.slot[0], z, pack.stride), member(s.slot[1], z, pack.stride),
           member(s.slot[2], z, pack.stride)},
          member(s.settings, z, pack.stride),
          member(s.layers, z, pack.stride),
          member(s.norms, z, pack.stride),
          member(pack.step, z, pack.stride)};
}

// Parameter i's step, of a tensor with regularizer r: its update with its gradient (regularized,
// clipped by `norm` where clipping is by norm) after weight decay. `kind` is s.kind, as a constant
// where the caller compiles one kernel per optimizer; `o` is the member's settings. The CUDA
// kernel's step; the CPU's (update_blocks, kernels/optimizer_cpu.cpp) makes the same calls in the
// same order in passes over a block, so that they vectorize, and OptimizerParity holds the two
// equal.
MF_HD void step_element(OptimizerKind kind, const OptimizerStep& s, const OptimizerSettings& o,
                        const StepConstants& c, const Regularizer& r, float norm, float* params,
                        const float* grads, float* const slot[3], int64_t i) {
  float w = params[i];
  const float g = clipped(s.clip, regularized_grad(s, r, grads[i], w), o.clip, norm);
  decay_weight(w, o, c.lr);
  optimizer_update(kind, w, slot, i, g, o, c, s.momentum_slot, s.amsgrad);
  params[i] = w;
}

// The norm clipping divides by: the tensor's, or the global one (after every tensor's), or none.
MF_HD float clip_norm(const OptimizerStep& s, const MemberStep& b, int tensor) {
  if (s.clip == ClipKind::norm) return b.norms[tensor];
  if (s.clip == ClipKind::global_norm) return b.norms[s.tensor_count];
  return 0.f;
}

// What the step does once per member, after every element has read the state (the first block's
// first thread does it): the batch moves on, and Nadam's product takes this step's factor.
MF_HD void finish_member_step(const OptimizerStep& s, const MemberStep& b) {
  StepState& state = *b.state;
  if (s.kind == OptimizerKind::nadam)
    state.nadam_product[state.t & 1] =
        nadam_product(b.settings->optimizer, state.nadam_product[(state.t - 1) & 1], state.t);
  state.first_row += s.batch_rows;
}

}  // namespace mf
