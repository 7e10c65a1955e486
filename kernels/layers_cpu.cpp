#include "kernels/layers_cpu.h"

#include <algorithm>

#include "kernels/cpu_activation.h"
#include "kernels/cpu_clones.h"
#include "kernels/param_tensors.h"

namespace mf::cpu {

MF_CPU_CLONES void activation_forward(const float* X, float* Y, int64_t begin, int64_t end, Activation act) {
  with_activation(act, [&](auto a) {
    for (int64_t i = begin; i < end; ++i) Y[i] = activate(a, X[i]);
  });
}

void activation_backward(const float* dY, float* dX, int64_t begin, int64_t end, const Through& own,
                         const Through& below) {
  if (dX != dY) std::copy(dY + begin, dY + end, dX + begin);
  through_in_place(own, dX + begin, begin, end - begin);
  through_in_place(below, dX + begin, begin, end - begin);
}

void dropout(const float* X, float* Y, int64_t begin, int64_t end, const LayerSettings& s, uint64_t seed, int layer,
             int64_t step, const Through& below) {
  for (int64_t i = begin; i < end; ++i) Y[i] = dropout(s, X[i], seed, layer, step, i);
  through_in_place(below, Y + begin, begin, end - begin);
}

// The same sums as batch_norm.cu's, in the same order: lane l adds rows l, l + 8, ..., then the
// lanes in a tree (8 -> 4 -> 2 -> 1), so that the statistics are those of the device.
namespace {
constexpr int kLanes = 8;
template <class Term>
double column_sum(int m, Term term) {
  double lanes[kLanes] = {};
  for (int lane = 0; lane < kLanes; ++lane)
    for (int r = lane; r < m; r += kLanes) lanes[lane] += term(r);
  for (int stride = kLanes / 2; stride > 0; stride /= 2)
    for (int lane = 0; lane < stride; ++lane) lanes[lane] += lanes[lane + stride];
  return lanes[0];
}
}  // namespace

void batch_norm_train(const float* X, float* Y, int m, int n, const BatchNormBuffers& b, const LayerSettings& s,
                      int c_begin, int c_end) {
  for (int c = c_begin; c < c_end; ++c) {
    const float mean = float(column_sum(m, [&](int r) { return double(X[int64_t(r) * n + c]); }) / m);
    const float variance = float(column_sum(m, [&](int r) {
                                   const float d = X[int64_t(r) * n + c] - mean;
                                   return double(d * d);
                                 }) /
                                 m);
    const float inverse = batch_norm_inverse(variance, s.epsilon);
    b.mean[c] = mean, b.inverse[c] = inverse;
    b.moving_mean[c] = b.moving_mean[c] * s.momentum + mean * s.one_minus_momentum;
    b.moving_variance[c] = b.moving_variance[c] * s.momentum + variance * s.one_minus_momentum;
    for (int r = 0; r < m; ++r)
      Y[int64_t(r) * n + c] = batch_norm_output(X[int64_t(r) * n + c], mean, inverse, b.gamma, b.beta, c);
  }
}

void batch_norm_infer(const float* X, float* Y, int m, int n, const BatchNormBuffers& b, const LayerSettings& s,
                      int c_begin, int c_end) {
  for (int c = c_begin; c < c_end; ++c) {
    const float inverse = batch_norm_inverse(b.moving_variance[c], s.epsilon);
    for (int r = 0; r < m; ++r)
      Y[int64_t(r) * n + c] = batch_norm_output(X[int64_t(r) * n + c], b.moving_mean[c], inverse, b.gamma, b.beta, c);
  }
}

void batch_norm_backward(const float* X, const float* dY, float* dX, int m, int n, const BatchNormBuffers& b,
                         const Through& below, int c_begin, int c_end) {
  for (int c = c_begin; c < c_end; ++c) {
    const float mean = b.mean[c], inverse = b.inverse[c];
    const double dbeta = column_sum(m, [&](int r) { return double(dY[int64_t(r) * n + c]); });
    const double dgamma = column_sum(m, [&](int r) {
      const int64_t at = int64_t(r) * n + c;
      return double(dY[at] * ((X[at] - mean) * inverse));
    });
    if (b.dbeta) b.dbeta[c] = float(dbeta);
    if (b.dgamma) b.dgamma[c] = float(dgamma);
    if (!dX) continue;
    const float scale = (b.gamma ? b.gamma[c] : 1.f) * inverse / float(m);
    for (int r = 0; r < m; ++r) {
      const int64_t at = int64_t(r) * n + c;
      const float xhat = (X[at] - mean) * inverse;
      dX[at] = below.apply(scale * (float(m) * dY[at] - float(dbeta) - xhat * float(dgamma)), at);
    }
  }
}

void activity_penalty(const float* Y, int64_t count, const Regularizer& r, double* partials, int blocks) {
  for (int block = 0; block < blocks; ++block) {
    double sum = 0;
    const int64_t begin = int64_t(block) * kParamBlock, end = std::min(begin + kParamBlock, count);
    for (int64_t i = begin; i < end; ++i) sum += regularizer_penalty(Y[i], r.l1, r.l2);
    partials[block] = sum;
  }
}

void activity_backward(const float* dY, float* dX, int64_t begin, int64_t end, int m, const Regularizer& r,
                       const Through& own) {
  for (int64_t i = begin; i < end; ++i) dX[i] = dY[i] + regularizer_grad(own.y[i], r.l1, r.l2) / float(m);
  through_in_place(own, dX + begin, begin, end - begin);
}

}  // namespace mf::cpu
