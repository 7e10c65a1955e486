#pragma once
// Element math shared by the CPU backend and the CUDA kernels: activations and
// their derivatives, loss terms, optimizer updates, the shuffle permutation.
#include <cmath>
#include <cstdint>

#include "kernels/hd.h"

namespace mf {

// Order is part of the weights file format; append only.
enum class Activation : int { linear = 0, relu = 1, sigmoid = 2, tanh = 3, softmax = 4 };
enum class Loss : int { mse = 0, binary_crossentropy = 1, sparse_categorical_crossentropy = 2 };

MF_HD float sigmoid(float z) {
  // Stable for large |z|: exp never overflows.
  if (z >= 0.f) return 1.f / (1.f + expf(-z));
  const float e = expf(z);
  return e / (1.f + e);
}

// Element-wise activations; softmax is a row operation and never reaches here.
MF_HD float activate(Activation a, float z) {
  switch (a) {
    case Activation::relu: return z > 0.f ? z : 0.f;
    case Activation::sigmoid: return sigmoid(z);
    case Activation::tanh: return tanhf(z);
    default: return z;
  }
}

// d act / d z written in terms of the output y = act(z), so backward needs
// only the stored output of each layer.
MF_HD float activation_grad_from_output(Activation a, float y) {
  switch (a) {
    case Activation::relu: return y > 0.f ? 1.f : 0.f;
    case Activation::sigmoid: return y * (1.f - y);
    case Activation::tanh: return 1.f - y * y;
    default: return 1.f;
  }
}

// Binary cross-entropy of a logit z against a target t in [0, 1],
// -t*log(sigmoid(z)) - (1-t)*log(1-sigmoid(z)) = max(z,0) - z*t + log(1+exp(-|z|)),
// and sigmoid(z), both from one e = exp(-|z|): sigmoid(z) = 1/(1+e) for z >= 0 and e/(1+e) below,
// exactly what sigmoid() computes.
struct BceOfLogit {
  float loss, probability;
};
MF_HD BceOfLogit bce_from_logit(float z, float t) {
  const float e = expf(-fabsf(z));
  return {fmaxf(z, 0.f) - z * t + log1pf(e), z >= 0.f ? 1.f / (1.f + e) : e / (1.f + e)};
}

// Columns of a row of targets: a class index for sparse categorical cross-entropy, else one value
// per output.
MF_HD int target_cols(Loss loss, int outputs) { return loss == Loss::sparse_categorical_crossentropy ? 1 : outputs; }

// Keras reduces every loss to a mean over the batch; mse and binary
// cross-entropy also average over the outputs of a row. This is the factor
// that turns a row term's derivative into d(batch loss)/d(output).
MF_HD float loss_grad_scale(Loss loss, int rows, int cols) {
  return loss == Loss::sparse_categorical_crossentropy ? 1.f / float(rows)
                                                       : 1.f / (float(rows) * float(cols));
}

// Adam with Keras's update; alpha = lr*sqrt(1-b2^t)/(1-b1^t) is computed once per step.
struct AdamStep {
  float alpha, one_minus_beta_1, one_minus_beta_2, epsilon;
};

// One model's optimizer settings and data order as the kernels read them: one entry per member of
// a pack, in the model's own memory, so that one launch steps every member with its own.
struct MemberSettings {
  uint64_t seed = 0;  // of the epoch shuffle (permute_index)
  float learning_rate = 0, momentum = 0;
  float beta_1 = 0, beta_2 = 0;                      // float32(beta)
  float one_minus_beta_1 = 0, one_minus_beta_2 = 0;  // 1 - beta in double from beta as written, then float32
  float epsilon = 0;
};

// Keras's arithmetic (keras/src/optimizers/adam.py): beta^t and alpha in float32 from float32(beta);
// the moment factors 1 - beta in double from beta as written (0.999), then float32 (0.001f, where
// 1 - 0.999f would be 0.00099998713f).
inline MemberSettings adam_settings(float learning_rate, double beta_1, double beta_2, float epsilon) {
  MemberSettings s;
  s.learning_rate = learning_rate;
  s.beta_1 = float(beta_1), s.beta_2 = float(beta_2);
  s.one_minus_beta_1 = float(1.0 - beta_1), s.one_minus_beta_2 = float(1.0 - beta_2);
  s.epsilon = epsilon;
  return s;
}

// Step t (from 1) of Adam with settings s. Each device thread computes it (t lives in device memory,
// so that a CUDA graph replays the step): the cost is two powf beside four loads and three stores.
// On a GPU that is CUDA's powf (within 2 ulp), so beta^t may differ from the CPU's in its last bits.
MF_HD AdamStep adam_step(const MemberSettings& s, int64_t t) {
  const float beta_1_power = powf(s.beta_1, float(t)), beta_2_power = powf(s.beta_2, float(t));
  return {s.learning_rate * sqrtf(1.f - beta_2_power) / (1.f - beta_1_power), s.one_minus_beta_1, s.one_minus_beta_2,
          s.epsilon};
}

MF_HD void adam_update(float& w, float& m, float& v, float g, const AdamStep& s) {
  m += (g - m) * s.one_minus_beta_1;
  v += (g * g - v) * s.one_minus_beta_2;
  w -= s.alpha * m / (sqrtf(v) + s.epsilon);
}

// Keras SGD: velocity = momentum*velocity - lr*g; w += velocity (plain step when momentum is 0).
MF_HD void sgd_update(float& w, float& velocity, float g, float lr, float momentum) {
  velocity = momentum * velocity - lr * g;
  w += velocity;
}

// ---- Deterministic shuffle: a keyed bijection of [0, n) ---------------------
// A 4-round Feistel network on the smallest even-bit domain >= n, with cycle
// walking to stay inside [0, n). Every index is computed independently, so the
// device fills a permutation with one thread per element and the CPU backend
// produces exactly the same order.

MF_HD uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

MF_HD uint32_t permute_index(uint32_t i, uint32_t n, uint64_t seed, uint32_t epoch) {
  uint32_t half_bits = 1;
  while ((1ull << (2 * half_bits)) < n) ++half_bits;
  const uint32_t mask = (1u << half_bits) - 1u;
  const uint32_t key = mix32(uint32_t(seed) ^ mix32(uint32_t(seed >> 32) + 0x9e3779b9U * (epoch + 1)));
  uint32_t x = i;
  do {
    uint32_t left = x >> half_bits, right = x & mask;
    for (uint32_t round = 0; round < 4; ++round) {
      const uint32_t f = mix32(right ^ key ^ (round * 0x85ebca6bU)) & mask;
      const uint32_t next = left ^ f;
      left = right;
      right = next;
    }
    x = (left << half_bits) | right;
  } while (x >= n);
  return x;
}

}  // namespace mf
