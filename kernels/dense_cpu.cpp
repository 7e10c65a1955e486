#include "kernels/dense_cpu.h"

#include <type_traits>

#include "kernels/cpu_clones.h"
#include "kernels/cpu_gemm.h"

namespace mf::cpu {
namespace {

// Calls body(std::integral_constant<Activation, A>) for the runtime `act`, so
// each loop is compiled for one activation: the switch folds away and relu's
// select vectorizes instead of branching on the sign of random data. Inlined into its callers, so
// that each of their clones (kernels/cpu_clones.h) compiles the loop for its CPU.
template <class Body>
[[gnu::always_inline]] inline void with_activation(Activation act, Body body) {
  switch (act) {
    case Activation::relu: return body(std::integral_constant<Activation, Activation::relu>());
    case Activation::sigmoid: return body(std::integral_constant<Activation, Activation::sigmoid>());
    case Activation::tanh: return body(std::integral_constant<Activation, Activation::tanh>());
    default: return body(std::integral_constant<Activation, Activation::linear>());
  }
}

// Y(m,n) = act(Y + b), rows `ld` floats apart: the forward product's epilogue.
MF_CPU_CLONES void add_bias_and_activate(const float* b, float* Y, int ld, int m, int n, Activation act) {
  with_activation(act, [&](auto a) {
    for (int r = 0; r < m; ++r) {
      float* y = Y + int64_t(r) * ld;
      for (int c = 0; c < n; ++c) y[c] = activate(a, y[c] + b[c]);
    }
  });
}

// db(n) = the column sums of dZ(m,n), rows `ld` floats apart, each in row order.
MF_CPU_CLONES void column_sums(const float* dZ, int ld, float* db, int m, int n) {
  for (int c = 0; c < n; ++c) db[c] = 0.f;
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) db[c] += dZ[int64_t(r) * ld + c];
}

}  // namespace

void dense_forward(const float* X, const float* W, const float* b, float* Y, int m, int k, int n,
                   Activation act) {
  dense_forward_columns(X, W, b, Y, m, k, n, act, 0, n);
}

void dense_forward_columns(const float* X, const float* W, const float* b, float* Y, int m, int k, int n,
                           Activation act, int n_begin, int n_end) {
  if (n_end <= n_begin) return;
  product(false, false, m, n_end - n_begin, k, X, k, W + n_begin, n, Y + n_begin, n);
  add_bias_and_activate(b + n_begin, Y + n_begin, n, m, n_end - n_begin, act);
}

void dense_backward_input(const float* dZ, const float* W, float* dX, int m, int k, int n) {
  product(false, true, m, k, n, dZ, n, W, n, dX, k);
}

void dense_backward_input_columns(const float* dZ, const float* W, float* dX, int m, int k, int n,
                                  const float* Y, Activation act, int k_begin, int k_end) {
  if (k_end <= k_begin) return;
  const int cols = k_end - k_begin;  // W's rows [k_begin, k_end) are dX's columns
  product(false, true, m, cols, n, dZ, n, W + int64_t(k_begin) * n, n, dX + k_begin, k);
  if (Y)
    for (int r = 0; r < m; ++r) {
      float* row = dX + int64_t(r) * k + k_begin;
      activation_backward(Y + int64_t(r) * k + k_begin, row, row, cols, act);
    }
}

void dense_backward_params(const float* X, const float* dZ, float* dW, float* db, int m, int k, int n) {
  dense_backward_params_part(X, dZ, dW, db, m, k, n, 0, k, 0, n);
}

void dense_backward_params_part(const float* X, const float* dZ, float* dW, float* db, int m, int k, int n,
                                int k_begin, int k_end, int n_begin, int n_end) {
  if (k_end > k_begin)  // X's columns [k_begin, k_end) are dW's rows
    product(true, false, k_end - k_begin, n, m, X + k_begin, k, dZ, n, dW + int64_t(k_begin) * n, n);
  if (n_end > n_begin) column_sums(dZ + n_begin, n, db + n_begin, m, n_end - n_begin);
}

MF_CPU_CLONES void activation_backward(const float* Y, const float* dY, float* dZ, int64_t count, Activation act) {
  with_activation(act, [&](auto a) {
    // In place (dense_backward_input's epilogue) as a loop of its own: the vectorizer's overlap check
    // would send dZ == dY to the scalar loop.
    if (dZ == dY) {
      for (int64_t i = 0; i < count; ++i) dZ[i] *= activation_grad_from_output(a, Y[i]);
    } else {
      for (int64_t i = 0; i < count; ++i) dZ[i] = dY[i] * activation_grad_from_output(a, Y[i]);
    }
  });
}

}  // namespace mf::cpu
