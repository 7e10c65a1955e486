#pragma once
// CPU references of the fused loss pass and the metric accumulation.
#include "kernels/loss_row.h"

namespace mf::cpu {

// values(m, shape.values()): each row's loss and its metrics' values (kernels/loss_row.h).
void loss(const LossShape& shape, const LossSettings& settings, const float* out,
          const float* target, float* d_out, float* values, int m, int n);
// totals[v] += Σ values(., v), v < count, rows in order.
void accumulate(const float* values, int count, int m, double* totals);
// bins[values(r, column)] += 1 for each row r < m: the histogram of the rows' codes.
void count_codes(const float* values, int count, int column, int m, double* bins);

}  // namespace mf::cpu
