#pragma once
// Element math shared by the CPU backend and the CUDA kernels: activations and their derivatives,
// loss terms, the shuffle permutation. The optimizers' are kernels/optimizer_math.h, the layers'
// (dropout, batch normalization, regularizers) kernels/layer_math.h.
#include <cmath>
#include <cstdint>

#include "kernels/hd.h"

namespace mf {

// Order is part of the weights file format; append only.
enum class Activation : int {
  linear = 0,
  relu = 1,
  sigmoid = 2,
  tanh = 3,
  softmax = 4,
  gelu = 5,
  swish = 6,
  elu = 7,
  selu = 8,
  softplus = 9,
  leaky_relu = 10
};

MF_HD float sigmoid(float z) {
  // Stable for large |z|: exp never overflows.
  if (z >= 0.f) return 1.f / (1.f + expf(-z));
  const float e = expf(z);
  return e / (1.f + e);
}

// The activations' constants, as TensorFlow's kernels round them: selu's scale and scale * alpha
// (Klambauer et al., 2017, tf.nn.selu), leaky_relu's negative slope (keras.activations.leaky_relu's
// default), 1/sqrt(2) and 1/sqrt(2 pi) for gelu, and softplus's threshold log(FLT_EPSILON) + 2,
// past which TensorFlow's softplus(z) is z (above -threshold) or exp(z) (below threshold).
inline constexpr float kSeluScale = 1.0507009873554804934193349852946f;
inline constexpr float kSeluScaleAlpha = 1.7580993408473768599402175208123f;
inline constexpr float kLeakyReluSlope = 0.2f;
inline constexpr float kInverseSqrt2 = 0.7071067811865476f, kInverseSqrt2Pi = 0.3989422804014327f;
inline constexpr float kSoftplusThreshold = -13.942385f;

// Element-wise activations as Keras 3 computes them on TensorFlow; softmax is a row operation and
// never reaches here. gelu is the exact one (keras.activations.gelu's approximate=False):
// 0.5 z erfc(-z/sqrt(2)); swish is silu, z sigmoid(z).
MF_HD float activate(Activation a, float z) {
  switch (a) {
    case Activation::relu:
      return z > 0.f ? z : 0.f;
    case Activation::sigmoid:
      return sigmoid(z);
    case Activation::tanh:
      return tanhf(z);
    case Activation::gelu:
      return 0.5f * z * erfcf(-z * kInverseSqrt2);
    case Activation::swish:
      return z * sigmoid(z);
    case Activation::elu:
      return z < 0.f ? expf(z) - 1.f : z;
    case Activation::selu:
      return z < 0.f ? kSeluScaleAlpha * (expf(z) - 1.f) : kSeluScale * z;
    case Activation::softplus:
      return z > -kSoftplusThreshold ? z : z < kSoftplusThreshold ? expf(z) : logf(expf(z) + 1.f);
    case Activation::leaky_relu:
      return z > 0.f ? z : z * kLeakyReluSlope;
    default:
      return z;
  }
}

// Whether act'(z) needs the pre-activation z: gelu and swish are not monotonic, so their output
// does not tell z. A layer with one of them keeps z beside its output y.
MF_HD bool needs_pre_activation(Activation a) {
  return a == Activation::gelu || a == Activation::swish;
}

// d act / d z, from the output y = act(z) where that tells it (so backward needs only the stored
// output of each layer), else from z (needs_pre_activation). The forms are TensorFlow's gradients:
// EluGrad and SeluGrad from the output, softplus's sigmoid(z) = 1 - exp(-y).
MF_HD float activation_grad(Activation a, float y, float z) {
  switch (a) {
    case Activation::relu:
      return y > 0.f ? 1.f : 0.f;
    case Activation::sigmoid:
      return y * (1.f - y);
    case Activation::tanh:
      return 1.f - y * y;
    case Activation::gelu:
      return 0.5f * erfcf(-z * kInverseSqrt2) + z * kInverseSqrt2Pi * expf(-0.5f * z * z);
    case Activation::swish: {
      const float s = sigmoid(z);
      return s * (1.f + z * (1.f - s));
    }
    case Activation::elu:
      return y < 0.f ? y + 1.f : 1.f;
    case Activation::selu:
      return y < 0.f ? y + kSeluScaleAlpha : kSeluScale;
    case Activation::softplus:
      return -expm1f(-y);
    case Activation::leaky_relu:
      return y > 0.f ? 1.f : kLeakyReluSlope;
    default:
      return 1.f;
  }
}

// The activation a layer's backward goes through: the gradient at a layer's output times act'
// there, from the layer's output y and, where act needs it, its pre-activation z (null otherwise).
// Linear, the default, leaves the gradient as it is.
struct Through {
  Activation act = Activation::linear;
  const float* y = nullptr;
  const float* z = nullptr;

  MF_HD bool any() const { return act != Activation::linear; }
  // The gradient v at element i, through the activation.
  MF_HD float apply(float v, int64_t i) const {
    return act == Activation::linear ? v : v * activation_grad(act, y[i], z ? z[i] : 0.f);
  }
};

// Order is part of the report's and the weights file's forms; append only.
enum class Loss : int {
  mse = 0,
  binary_crossentropy = 1,
  sparse_categorical_crossentropy = 2,
  categorical_crossentropy = 3,
  mean_absolute_error = 4,
  huber = 5,
  log_cosh = 6
};

// Whether the loss takes logits: its output activation (sigmoid, softmax) is applied inside the
// loss pass, stably, as TensorFlow does when it finds a Keras model's sigmoid or softmax output, or
// as the loss's from_logits asks. The other losses read the output layer's activations.
MF_HD bool takes_logits(Loss loss) {
  return loss == Loss::binary_crossentropy || loss == Loss::sparse_categorical_crossentropy ||
         loss == Loss::categorical_crossentropy;
}
// Whether the loss is a sum over a row's classes (the categorical cross-entropies) rather than a
// mean over its outputs (every other loss, Keras's reduction over the last axis).
MF_HD bool sums_over_classes(Loss loss) {
  return loss == Loss::sparse_categorical_crossentropy || loss == Loss::categorical_crossentropy;
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

// Keras reduces every loss to a mean over the batch's rows; a row's loss is a mean over its
// outputs, or a sum over its classes. This is the factor that turns a row term's derivative into
// d(batch loss)/d(output).
MF_HD float loss_grad_scale(Loss loss, int rows, int cols) {
  return sums_over_classes(loss) ? 1.f / float(rows) : 1.f / (float(rows) * float(cols));
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
  const uint32_t key =
      mix32(uint32_t(seed) ^ mix32(uint32_t(seed >> 32) + 0x9e3779b9U * (epoch + 1)));
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
