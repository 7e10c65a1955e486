#pragma once
// CPU references of the fused loss pass and the metric accumulation.
#include "kernels/element_math.h"

namespace mf::cpu {

void loss(Loss loss, const float* out, const float* target, float* d_out, float* row_loss, float* row_correct,
          int m, int n);
void accumulate(const float* row_loss, const float* row_correct, int m, double* totals);

}  // namespace mf::cpu
