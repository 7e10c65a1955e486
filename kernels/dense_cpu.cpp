#include "kernels/dense_cpu.h"

#include <type_traits>

#include "kernels/openblas.h"

namespace mf::cpu {
namespace {

// Calls body(std::integral_constant<Activation, A>) for the runtime `act`, so
// each loop is compiled for one activation: the switch folds away and relu's
// select vectorizes instead of branching on the sign of random data.
template <class Body>
void with_activation(Activation act, Body body) {
  switch (act) {
    case Activation::relu: return body(std::integral_constant<Activation, Activation::relu>());
    case Activation::sigmoid: return body(std::integral_constant<Activation, Activation::sigmoid>());
    case Activation::tanh: return body(std::integral_constant<Activation, Activation::tanh>());
    default: return body(std::integral_constant<Activation, Activation::linear>());
  }
}

}  // namespace

void dense_forward(const float* X, const float* W, const float* b, float* Y, int m, int k, int n,
                   Activation act) {
  sgemm(CblasNoTrans, CblasNoTrans, m, n, k, X, k, W, n, Y, n);
  // Epilogue: one pass adds the bias and applies the activation.
  with_activation(act, [&](auto a) {
    for (int r = 0; r < m; ++r) {
      float* y = Y + int64_t(r) * n;
      for (int c = 0; c < n; ++c) y[c] = activate(a, y[c] + b[c]);
    }
  });
}

void dense_backward_input(const float* dZ, const float* W, float* dX, int m, int k, int n) {
  sgemm(CblasNoTrans, CblasTrans, m, k, n, dZ, n, W, n, dX, k);
}

void dense_backward_params(const float* X, const float* dZ, float* dW, float* db, int m, int k, int n) {
  sgemm(CblasTrans, CblasNoTrans, k, n, m, X, k, dZ, n, dW, n);
  for (int c = 0; c < n; ++c) db[c] = 0.f;
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) db[c] += dZ[int64_t(r) * n + c];
}

void activation_backward(const float* Y, const float* dY, float* dZ, int64_t count, Activation act) {
  with_activation(act, [&](auto a) {
    for (int64_t i = 0; i < count; ++i) dZ[i] = dY[i] * activation_grad_from_output(a, Y[i]);
  });
}

}  // namespace mf::cpu
