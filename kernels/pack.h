#pragma once
// A pack: K models of the same shape trained in the same launches, the member index one more grid
// dimension (horizontal fusion, as in HFTA, MLSys 2021). The members' buffers lie side by side at
// fixed strides, so a kernel finds member z's copy of a buffer from member 0's pointer. One model is
// the pack of one: the single-model kernels are these with count 1.
#include <cstdint>
#include <type_traits>

#include "kernels/hd.h"

namespace mf {

// What changes from one training step to the next, in each member's own memory, so that every step
// makes the same launches with the same arguments (one CUDA graph replays them all): the kernels read
// it and advance it. The metrics accumulation of a training step counts the step (t += 1); the
// optimizer step, its last launch, moves first_row past the batch; an epoch starts at first_row 0.
struct StepState {
  int64_t t = 0;          // optimizer steps, this one included once its loss pass has run
  int64_t first_row = 0;  // the batch's first row in the epoch's order
};

struct Pack {
  int count = 1;            // K members
  int64_t stride = 0;       // bytes between the members' copies of the model's own buffers (parameters,
                            // gradients, optimizer state and settings, activations, scratch, totals)
  int64_t data_stride = 0;  // of what a call reads as input data (X of the first layer, the loss's
                            // targets, gather's destination): the members' own batches, or 0 for the
                            // data set, one copy that every member reads
  int64_t rows_stride = 0;  // of the batch's row indices (each member's own epoch order)
  // The members' step state, member z's at `stride`: row indices are read from its first_row on, the
  // metrics accumulation counts the step (with counts_step) and the optimizer moves first_row on.
  // Null where there is none (evaluation, a plain product): row indices start at 0, nothing advances.
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

// The metrics accumulation of a training step counts it: one thread of member z's calls this.
MF_HD void count_step(const Pack& pack, int z) {
  if (pack.step && pack.counts_step) ++member(pack.step, z, pack.stride)->t;
}

// Where member z's batch starts in its row indices: first_row of its step state, or 0.
MF_HD int64_t first_row(const Pack& pack, int z) {
  return pack.step ? member(pack.step, z, pack.stride)->first_row : 0;
}

}  // namespace mf
