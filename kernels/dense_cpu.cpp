#include "kernels/dense_cpu.h"

#include "kernels/cpu_activation.h"
#include "kernels/cpu_clones.h"
#include "kernels/cpu_gemm.h"

namespace mf::cpu {
namespace {

// Y(m,n) = act(Y + b) (b null: no bias), and Z = Y + b where Z is given, rows `ld` floats apart:
// the forward product's epilogue.
MF_CPU_CLONES void add_bias_and_activate(const float* b, float* Y, float* Z, int ld, int m, int n,
                                         Activation act) {
  with_activation(act, [&](auto a) {
    for (int r = 0; r < m; ++r) {
      float* y = Y + int64_t(r) * ld;
      if (Z) {
        float* z = Z + int64_t(r) * ld;
        for (int c = 0; c < n; ++c) z[c] = b ? y[c] + b[c] : y[c];
        for (int c = 0; c < n; ++c) y[c] = activate(a, z[c]);
      } else if (b) {
        for (int c = 0; c < n; ++c) y[c] = activate(a, y[c] + b[c]);
      } else {
        for (int c = 0; c < n; ++c) y[c] = activate(a, y[c]);
      }
    }
  });
}

// The backward product's epilogue, columns [k_begin, k_end) of dX(m,k): through the layer below.
MF_CPU_CLONES void through_columns(const Through& below, float* dX, int m, int k, int k_begin,
                                   int k_end) {
  for (int r = 0; r < m; ++r)
    through_in_place(below, dX + int64_t(r) * k + k_begin, int64_t(r) * k + k_begin,
                     k_end - k_begin);
}

// db(n) = the column sums of dZ(m,n), rows `ld` floats apart, each in row order.
MF_CPU_CLONES void column_sums(const float* dZ, int ld, float* db, int m, int n) {
  for (int c = 0; c < n; ++c) db[c] = 0.f;
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) db[c] += dZ[int64_t(r) * ld + c];
}

}  // namespace

void dense_forward(const float* X, const float* W, const float* b, float* Y, float* Z, int m, int k,
                   int n, Activation act) {
  dense_forward_columns(X, W, b, Y, Z, m, k, n, act, 0, n);
}

void dense_forward_columns(const float* X, const float* W, const float* b, float* Y, float* Z,
                           int m, int k, int n, Activation act, int n_begin, int n_end) {
  if (n_end <= n_begin) return;
  product(false, false, m, n_end - n_begin, k, X, k, W + n_begin, n, Y + n_begin, n);
  add_bias_and_activate(b ? b + n_begin : nullptr, Y + n_begin, Z ? Z + n_begin : nullptr, n, m,
                        n_end - n_begin, act);
}

void dense_backward_input(const float* dZ, const float* W, float* dX, int m, int k, int n) {
  product(false, true, m, k, n, dZ, n, W, n, dX, k);
}

void dense_backward_input_columns(const float* dZ, const float* W, float* dX, int m, int k, int n,
                                  const Through& below, int k_begin, int k_end) {
  if (k_end <= k_begin) return;
  const int cols = k_end - k_begin;  // W's rows [k_begin, k_end) are dX's columns
  product(false, true, m, cols, n, dZ, n, W + int64_t(k_begin) * n, n, dX + k_begin, k);
  if (below.any()) through_columns(below, dX, m, k, k_begin, k_end);
}

void dense_backward_params(const float* X, const float* dZ, float* dW, float* db, int m, int k,
                           int n) {
  dense_backward_params_part(X, dZ, dW, db, m, k, n, 0, k, 0, n);
}

void dense_backward_params_part(const float* X, const float* dZ, float* dW, float* db, int m, int k,
                                int n, int k_begin, int k_end, int n_begin, int n_end) {
  if (k_end > k_begin)  // X's columns [k_begin, k_end) are dW's rows
    product(true, false, k_end - k_begin, n, m, X + k_begin, k, dZ, n, dW + int64_t(k_begin) * n,
            n);
  if (db && n_end > n_begin) column_sums(dZ + n_begin, n, db + n_begin, m, n_end - n_begin);
}

}  // namespace mf::cpu
