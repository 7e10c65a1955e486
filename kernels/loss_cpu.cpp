#include "kernels/loss_cpu.h"

#include <cstdint>

#include "kernels/loss_row.h"

namespace mf::cpu {

void loss(Loss loss, const float* out, const float* target, float* d_out, float* row_loss, float* row_correct,
          int m, int n) {
  const int cols = target_cols(loss, n);
  const float scale = loss_grad_scale(loss, m, n);
  for (int r = 0; r < m; ++r)
    loss_row(loss, out + int64_t(r) * n, target + int64_t(r) * cols, d_out + int64_t(r) * n, n, scale,
             row_loss[r], row_correct[r]);
}

void accumulate(const float* row_loss, const float* row_correct, int m, double* totals) {
  double loss = 0, correct = 0;
  for (int r = 0; r < m; ++r) loss += row_loss[r], correct += row_correct[r];
  totals[0] += loss;
  totals[1] += correct;
}

}  // namespace mf::cpu
