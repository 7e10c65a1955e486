#include "kernels/layers_cpu.h"

#include <algorithm>

#include "kernels/cpu_activation.h"
#include "kernels/cpu_clones.h"
#include "kernels/param_tensors.h"

namespace mf::cpu {

MF_CPU_CLONES void activation_forward(const float* X, float* Y, int64_t begin, int64_t end,
                                      Activation act) {
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

namespace {
// Y[i] = dropout of X[i] over [begin, end): the key once, then a loop of integer hashes and a
// select, which each clone vectorizes at its width (no multiply-add: the same bits on every CPU).
MF_CPU_CLONES void dropout_range(const float* X, float* Y, int64_t begin, int64_t end,
                                 const LayerSettings& s, uint32_t key) {
  const LayerSettings settings = s;  // a copy, which the stores to Y cannot alias
  for (int64_t i = begin; i < end; ++i) Y[i] = dropout(settings, X[i], key, i);
}
}  // namespace

void dropout(const float* X, float* Y, int64_t begin, int64_t end, const LayerSettings& s,
             uint64_t seed, int layer, int64_t step, const Through& below) {
  dropout_range(X, Y, begin, end, s, dropout_key(seed, layer, step));
  through_in_place(below, Y + begin, begin, end - begin);
}

// The same sums as batch_norm.cu's, in the same order: for each column, lane l adds rows l, l + 8,
// ..., then the lanes in a tree (8 -> 4 -> 2 -> 1), so that the statistics are those of the device.
// A tile of up to kTile columns is summed at once, row by row in memory order, each row's columns
// side by side: the loop over them vectorizes, where a column at a time strides over the rows.
namespace {
constexpr int kLanes = 8, kTile = 64;
template <class Term>  // term(r, j): the double added for row r and column c0 + j
void column_sums(int m, int width, Term term, double* sums) {
  double lanes[kLanes][kTile] = {};
  for (int lane = 0; lane < kLanes; ++lane)
    for (int r = lane; r < m; r += kLanes)
      for (int j = 0; j < width; ++j) lanes[lane][j] += term(r, j);
  for (int stride = kLanes / 2; stride > 0; stride /= 2)
    for (int lane = 0; lane < stride; ++lane)
      for (int j = 0; j < width; ++j) lanes[lane][j] += lanes[lane + stride][j];
  for (int j = 0; j < width; ++j) sums[j] = lanes[0][j];
}
}  // namespace

void batch_norm_train(const float* X, float* Y, int m, int n, const BatchNormBuffers& b,
                      const LayerSettings& s, int c_begin, int c_end) {
  for (int c0 = c_begin; c0 < c_end; c0 += kTile) {
    const int width = std::min(kTile, c_end - c0);
    const float* x = X + c0;  // row r's column c0 + j at x[r * n + j]
    double sums[kTile];
    float mean[kTile], inverse[kTile];
    column_sums(
        m, width, [&](int r, int j) { return double(x[int64_t(r) * n + j]); }, sums);
    for (int j = 0; j < width; ++j) mean[j] = float(sums[j] / m);
    column_sums(
        m, width,
        [&](int r, int j) {
          const float d = x[int64_t(r) * n + j] - mean[j];
          return double(d * d);
        },
        sums);
    for (int j = 0; j < width; ++j) {
      const int c = c0 + j;
      const float variance = float(sums[j] / m);
      inverse[j] = batch_norm_inverse(variance, s.epsilon);
      b.mean[c] = mean[j], b.inverse[c] = inverse[j];
      b.moving_mean[c] = b.moving_mean[c] * s.momentum + mean[j] * s.one_minus_momentum;
      b.moving_variance[c] = b.moving_variance[c] * s.momentum + variance * s.one_minus_momentum;
    }
    for (int r = 0; r < m; ++r)
      for (int j = 0; j < width; ++j)
        Y[int64_t(r) * n + c0 + j] =
            batch_norm_output(x[int64_t(r) * n + j], mean[j], inverse[j], b.gamma, b.beta, c0 + j);
  }
}

void batch_norm_infer(const float* X, float* Y, int m, int n, const BatchNormBuffers& b,
                      const LayerSettings& s, int c_begin, int c_end) {
  for (int c0 = c_begin; c0 < c_end; c0 += kTile) {
    const int width = std::min(kTile, c_end - c0);
    float inverse[kTile];
    for (int j = 0; j < width; ++j)
      inverse[j] = batch_norm_inverse(b.moving_variance[c0 + j], s.epsilon);
    for (int r = 0; r < m; ++r)
      for (int j = 0; j < width; ++j) {
        const int64_t at = int64_t(r) * n + c0 + j;
        Y[at] =
            batch_norm_output(X[at], b.moving_mean[c0 + j], inverse[j], b.gamma, b.beta, c0 + j);
      }
  }
}

void batch_norm_backward(const float* X, const float* dY, float* dX, int m, int n,
                         const BatchNormBuffers& b, const Through& below, int c_begin, int c_end) {
  for (int c0 = c_begin; c0 < c_end; c0 += kTile) {
    const int width = std::min(kTile, c_end - c0);
    const float *x = X + c0, *dy = dY + c0, *mean = b.mean + c0, *inverse = b.inverse + c0;
    double dbeta[kTile], dgamma[kTile];
    column_sums(
        m, width, [&](int r, int j) { return double(dy[int64_t(r) * n + j]); }, dbeta);
    column_sums(
        m, width,
        [&](int r, int j) {
          const int64_t at = int64_t(r) * n + j;
          return double(dy[at] * ((x[at] - mean[j]) * inverse[j]));
        },
        dgamma);
    for (int j = 0; j < width; ++j) {
      if (b.dbeta) b.dbeta[c0 + j] = float(dbeta[j]);
      if (b.dgamma) b.dgamma[c0 + j] = float(dgamma[j]);
    }
    if (!dX) continue;
    float scale[kTile];
    for (int j = 0; j < width; ++j)
      scale[j] = (b.gamma ? b.gamma[c0 + j] : 1.f) * inverse[j] / float(m);
    for (int r = 0; r < m; ++r)
      for (int j = 0; j < width; ++j) {
        const int64_t at = int64_t(r) * n + j;
        const float xhat = (x[at] - mean[j]) * inverse[j];
        dX[c0 + at] = below.apply(
            scale[j] * (float(m) * dy[at] - float(dbeta[j]) - xhat * float(dgamma[j])), c0 + at);
      }
  }
}

void activity_penalty(const float* Y, int64_t count, const Regularizer& r, double* partials,
                      int blocks) {
  for (int block = 0; block < blocks; ++block) {
    double sum = 0;
    const int64_t begin = int64_t(block) * kParamBlock, end = std::min(begin + kParamBlock, count);
    for (int64_t i = begin; i < end; ++i) sum += regularizer_penalty(Y[i], r.l1, r.l2);
    partials[block] = sum;
  }
}

void activity_backward(const float* dY, float* dX, int64_t begin, int64_t end, int m,
                       const Regularizer& r, const Through& own) {
  for (int64_t i = begin; i < end; ++i)
    dX[i] = dY[i] + regularizer_grad(own.y[i], r.l1, r.l2) / float(m);
  through_in_place(own, dX + begin, begin, end - begin);
}

}  // namespace mf::cpu
