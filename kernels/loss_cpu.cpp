#include "kernels/loss_cpu.h"

#include <cstdint>

namespace mf::cpu {

void loss(const LossShape& shape, const LossSettings& settings, const float* out,
          const float* target, float* d_out, float* values, int m, int n) {
  const float scale = loss_grad_scale(shape.loss, m, n);
  for (int r = 0; r < m; ++r)
    loss_row(shape, settings, out + int64_t(r) * n, target + int64_t(r) * shape.target_stride(),
             d_out + int64_t(r) * n, n, scale, values + int64_t(r) * shape.values());
}

void accumulate(const float* values, int count, int m, double* totals) {
  for (int v = 0; v < count; ++v) {
    double sum = 0;
    for (int r = 0; r < m; ++r) sum += values[int64_t(r) * count + v];
    totals[v] += sum;
  }
}

void count_codes(const float* values, int count, int column, int m, double* bins) {
  for (int r = 0; r < m; ++r) bins[int(values[int64_t(r) * count + column])] += 1;
}

}  // namespace mf::cpu
