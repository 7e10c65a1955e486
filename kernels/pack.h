#pragma once
// A pack: K models of the same shape trained in the same launches, the member index one more grid
// dimension (horizontal fusion, as in HFTA, MLSys 2021). The members' buffers lie side by side at
// fixed strides, so a kernel finds member z's copy of a buffer from member 0's pointer. One model
// is the pack of one: the single-model kernels are these with count 1.
#include <cstdint>
#include <type_traits>

#include "kernels/hd.h"

namespace mf {

// What changes from one training step to the next, in each member's own memory, so that every step
// makes the same launches with the same arguments (one CUDA graph replays them all): the kernels
// read it and advance it. The metrics accumulation of a training step counts the step (t += 1); the
// optimizer step, its last launch, moves first_row past the batch; an epoch starts at first_row 0.
struct StepState {
  int64_t t = 0;          // optimizer steps, this one included once its loss pass has run
  int64_t first_row = 0;  // the batch's first row in the epoch's order
  // Nadam's product of its momentum schedule up to step t, in two slots: step t reads slot (t - 1)
  // % 2 (the product up to t - 1) and its optimizer launch writes slot t % 2, so that no block
  // reads a slot another block writes. Both 1 before the first step (Model's constructor writes
  // them).
  float nadam_product[2] = {1.f, 1.f};
  // Nonzero once the member stopped (EarlyStopping, or diverged) while its pack goes on: every
  // kernel of its steps then leaves its buffers as they are, so a stopped member costs its blocks'
  // launch and nothing more (fit.h: the pack is not compacted).
  int32_t stopped = 0;
};

struct Pack {
  int count = 1;       // K members
  int64_t stride = 0;  // bytes between the members' copies of the model's own buffers (parameters,
                       // gradients, optimizer state and settings, activations, scratch, totals)
  int64_t data_stride = 0;  // of what a call reads as input data (X of the first layer, the loss's
                            // targets, gather's destination): the members' own batches, or 0 for
                            // the data set, one copy that every member reads
  int64_t rows_stride = 0;  // of the batch's row indices (each member's own epoch order)
  // The members' step state, member z's at `stride`: row indices are read from its first_row on,
  // the metrics accumulation counts the step (with counts_step) and the optimizer moves first_row
  // on. Null where there is none (a plain product): row indices start at 0, nothing advances, no
  // member is stopped. An evaluation has it without counts_step, so that a stopped member is
  // skipped.
  StepState* step = nullptr;
  bool counts_step = false;  // the metrics accumulation counts the step: train_batch's, not a bare
                             // gradient computation's
};

// Member z's copy of a buffer whose member 0 copy is p (null stays null: an operand not given).
template <class T>
MF_HD T* member(T* p, int z, int64_t stride) {
  using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;
  return p ? reinterpret_cast<T*>(reinterpret_cast<Byte*>(p) + int64_t(z) * stride) : p;
}

// Whether member z has stopped (StepState::stopped): every kernel of a training step returns at
// once for it. False without step state.
MF_HD bool stopped(const Pack& pack, int z) {
  return pack.step && member(pack.step, z, pack.stride)->stopped != 0;
}

// The metrics accumulation of a training step counts it: one thread of member z's calls this.
MF_HD void count_step(const Pack& pack, int z) {
  if (pack.step && pack.counts_step) ++member(pack.step, z, pack.stride)->t;
}

// Where member z's batch starts in its row indices: first_row of its step state, or 0.
MF_HD int64_t first_row(const Pack& pack, int z) {
  return pack.step ? member(pack.step, z, pack.stride)->first_row : 0;
}

// The count of training steps before the current one, for the kernels that key on the step
// (dropout's mask): the loss pass of a training step counts it, so the forward reads t and what
// runs after the loss pass reads t - 1. 0 without step state.
MF_HD int64_t steps_before(const Pack& pack, int z, bool after_loss_pass) {
  if (!pack.step) return 0;
  return member(pack.step, z, pack.stride)->t - (after_loss_pass && pack.counts_step ? 1 : 0);
}

}  // namespace mf
