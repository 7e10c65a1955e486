#pragma once
// The layers' element math beside Dense, shared by the CPU backend and the CUDA kernels: Dropout's
// mask, BatchNormalization's statistics and the regularizers' settings, as Keras 3 defines them
// (keras/src/layers/regularization/dropout.py,
// keras/src/layers/normalization/batch_normalization.py, keras/src/regularizers/regularizers.py).
#include <cmath>
#include <cstdint>

#include "kernels/element_math.h"
#include "kernels/hd.h"
#include "kernels/pack.h"

namespace mf {

// l1 |x| + l2 x^2 summed over a tensor (keras.regularizers.L1L2; L1 and L2 are its halves).
struct Regularizer {
  float l1 = 0, l2 = 0;
  MF_HD bool any() const { return l1 != 0.f || l2 != 0.f; }
};
inline bool operator==(const Regularizer& a, const Regularizer& b) {
  return a.l1 == b.l1 && a.l2 == b.l2;
}

// One layer's settings as the kernels read them, one entry per layer of the spec, per pack member
// (members may differ in each): in the model's own memory, so that one launch serves every member.
struct LayerSettings {
  float dropout_rate = 0;  // Dropout: a unit is dropped with this probability
  // 1 / (1 - rate) in double, then float32, as tf.nn.dropout scales what it keeps
  float dropout_scale = 1;
  // BatchNormalization: moving = moving * momentum + batch * (1 - momentum), (1 - momentum) in
  // double from momentum as written, then float32; epsilon is added to the variance.
  float momentum = 0, one_minus_momentum = 0, epsilon = 0;
  // Dense: the penalties on its kernel, its bias and its output (activity), added to the loss.
  Regularizer kernel, bias, activity;
};

// ---- Dropout: inverted dropout (Srivastava et al., JMLR 2014, as tf.nn.dropout computes it): in
// training, y = x / (1 - rate) where the unit is kept, 0 where it is dropped; in inference, y = x.
// A unit is kept when its uniform draw u in [0, 1) is at least the rate (tf.nn.dropout's rule). The
// draw is a hash of (the member's seed, the layer's index in the spec, the step's count, the
// element's index in the batch): the same spec gives the same masks on every backend, any pack, any
// thread count, and backward finds the mask again without storing it.
// The draw's part that a member's layer shares across one step's elements, computed once a step.
MF_HD uint32_t dropout_key(uint64_t seed, int layer, int64_t step) {
  const uint32_t key =
      mix32(uint32_t(seed) ^ mix32(uint32_t(seed >> 32) + 0x9e3779b9U * uint32_t(layer + 1)));
  return mix32(key ^ mix32(uint32_t(step) ^ mix32(uint32_t(uint64_t(step) >> 32) + 0x85ebca6bU)));
}
MF_HD float dropout_uniform(uint32_t key, int64_t element) {
  const uint32_t bits =
      mix32(key ^ mix32(uint32_t(element) + 0xc2b2ae35U * uint32_t(uint64_t(element) >> 32)));
  return float(int32_t(bits >> 8)) * (1.f / 16777216.f);  // 24 bits: every value exact in float32
}
// Dropout of x at element `element` of the batch, or its gradient's (the same mask and scale).
MF_HD float dropout(const LayerSettings& s, float x, uint32_t key, int64_t element) {
  return dropout_uniform(key, element) >= s.dropout_rate ? x * s.dropout_scale : 0.f;
}

// ---- BatchNormalization (Ioffe & Szegedy, ICML 2015), each column over the batch's rows: in
// training the batch's mean and biased variance (tf.nn.moments), in inference the moving ones; then
// y = x * inv + (beta - mean * inv) with inv = gamma / sqrt(variance + epsilon),
// tf.nn.batch_normalization's arithmetic. gamma (scale) and beta (center) are optional: null reads
// as 1 and 0. One BatchNormalization layer's buffers (member 0's, the others at the pack's stride),
// n columns.
struct BatchNormBuffers {
  int layer = 0;                 // its index in the spec: its LayerSettings
  const float* gamma = nullptr;  // (n), null without scale
  const float* beta = nullptr;   // (n), null without center
  float *moving_mean = nullptr, *moving_variance = nullptr;  // (n) each: non-trainable weights
  float *mean = nullptr, *inverse = nullptr;  // (n) each: the training batch's, for backward
  float *dgamma = nullptr, *dbeta = nullptr;  // (n) each where gamma, beta are
};

// Member z's copies of a layer's buffers, `stride` bytes apart (kernels/pack.h).
MF_HD BatchNormBuffers member_buffers(BatchNormBuffers b, int z, int64_t stride) {
  b.gamma = member(b.gamma, z, stride), b.beta = member(b.beta, z, stride);
  b.moving_mean = member(b.moving_mean, z, stride),
  b.moving_variance = member(b.moving_variance, z, stride);
  b.mean = member(b.mean, z, stride), b.inverse = member(b.inverse, z, stride);
  b.dgamma = member(b.dgamma, z, stride), b.dbeta = member(b.dbeta, z, stride);
  return b;
}
MF_HD Through member_through(Through t, int z, int64_t stride) {
  t.y = member(t.y, z, stride), t.z = member(t.z, z, stride);
  return t;
}

MF_HD float batch_norm_inverse(float variance, float epsilon) {
  return 1.f / sqrtf(variance + epsilon);
}
MF_HD float batch_norm_output(float x, float mean, float inverse, const float* gamma,
                              const float* beta, int64_t c) {
  const float inv = gamma ? inverse * gamma[c] : inverse;
  return x * inv + ((beta ? beta[c] : 0.f) - mean * inv);
}

}  // namespace mf
