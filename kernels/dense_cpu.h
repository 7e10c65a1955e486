#pragma once
// CPU references of the dense-layer products (OpenBLAS) and their epilogues, the epilogues
// compiled for each CPU's vector width (kernels/cpu_clones.h).
// Shapes as in backends/backend.h.
#include <cstdint>

#include "kernels/element_math.h"

namespace mf::cpu {

// b null: no bias; Z: also the pre-activation X W + b, where given.
void dense_forward(const float* X, const float* W, const float* b, float* Y, float* Z, int m, int k,
                   int n, Activation act);
void dense_backward_input(const float* dZ, const float* W, float* dX, int m, int k, int n);
// One thread's share of a product too short to split by rows: columns [begin, end) of the output,
// Y's (and Z's) of dense_forward (epilogue included), dX's of dense_backward_input (then through
// `below` on them: its buffers are (m,k) like dX).
void dense_forward_columns(const float* X, const float* W, const float* b, float* Y, float* Z,
                           int m, int k, int n, Activation act, int n_begin, int n_end);
void dense_backward_input_columns(const float* dZ, const float* W, float* dX, int m, int k, int n,
                                  const Through& below, int k_begin, int k_end);
void dense_backward_params(const float* X, const float* dZ, float* dW, float* db, int m, int k,
                           int n);
// One thread's share of it: rows [k_begin, k_end) of dW and columns [n_begin, n_end) of db
// (dense_forward and dense_backward_input split by rows of their outputs as they are: a row of
// theirs reads no other row); db null: no bias. db's sums are those of the whole call; OpenBLAS may
// pick another kernel for a smaller product, so a share of any product can differ from the whole
// call's in the last bits.
void dense_backward_params_part(const float* X, const float* dZ, float* dW, float* db, int m, int k,
                                int n, int k_begin, int k_end, int n_begin, int n_end);

}  // namespace mf::cpu
