#pragma once
// CPU references of the dense-layer products (OpenBLAS) and their epilogues, the epilogues
// compiled for each CPU's vector width (kernels/cpu_clones.h).
// Shapes as in backends/backend.h.
#include <cstdint>

#include "kernels/element_math.h"

namespace mf::cpu {

void dense_forward(const float* X, const float* W, const float* b, float* Y, int m, int k, int n,
                   Activation act);
void dense_backward_input(const float* dZ, const float* W, float* dX, int m, int k, int n);
void dense_backward_params(const float* X, const float* dZ, float* dW, float* db, int m, int k, int n);
void activation_backward(const float* Y, const float* dY, float* dZ, int64_t count, Activation act);

}  // namespace mf::cpu
