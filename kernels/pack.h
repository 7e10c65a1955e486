#pragma once
// A pack: K models of the same shape trained in the same launches, the member index one more grid
// dimension (horizontal fusion, as in HFTA, MLSys 2021). The members' buffers lie side by side at
// fixed strides, so a kernel finds member z's copy of a buffer from member 0's pointer. One model is
// the pack of one: the single-model kernels are these with count 1.
#include <cstdint>
#include <type_traits>

#include "kernels/hd.h"

namespace mf {

struct Pack {
  int count = 1;            // K members
  int64_t stride = 0;       // bytes between the members' copies of the model's own buffers (parameters,
                            // gradients, optimizer state and settings, activations, scratch, totals)
  int64_t data_stride = 0;  // of what a call reads as input data (X of the first layer, the loss's
                            // targets, gather's destination): the members' own batches, or 0 for the
                            // data set, one copy that every member reads
  int64_t rows_stride = 0;  // of the batch's row indices (each member's own epoch order)
};

// Member z's copy of a buffer whose member 0 copy is p (null stays null: an operand not given).
template <class T>
MF_HD T* member(T* p, int z, int64_t stride) {
  using Byte = std::conditional_t<std::is_const_v<T>, const char, char>;
  return p ? reinterpret_cast<T*>(reinterpret_cast<Byte*>(p) + int64_t(z) * stride) : p;
}

}  // namespace mf
