#pragma once
// CPU references of the optimizer steps over a flat parameter buffer.
#include <cstdint>

#include "kernels/element_math.h"

namespace mf::cpu {

void adam(float* w, const float* g, float* m, float* v, int64_t n, const AdamStep& step);
void sgd(float* w, const float* g, float* velocity, int64_t n, float lr, float momentum);

}  // namespace mf::cpu
