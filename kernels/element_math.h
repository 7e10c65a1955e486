#pragma once
// Element math shared by the CPU backend and the CUDA kernels: the gradient through an activation
// (the activations themselves are kernels/activations.h), the cross-entropies' terms (the other
// losses' are kernels/losses.h), the shuffle permutation. The
// optimizers' are kernels/optimizer_math.h, the layers' (dropout, batch normalization,
// regularizers) kernels/layer_math.h.
#include <cmath>
#include <cstdint>

#include "kernels/losses.h"
#include "kernels/hd.h"

namespace mf {

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

// The Feistel network of one (n, seed, epoch): its half width and round key, computed once for
// every index of the permutation.
struct Permutation {
  uint32_t n, half_bits, mask, key;

  MF_HD Permutation(uint32_t n, uint64_t seed, uint32_t epoch) : n(n), half_bits(1) {
    while ((1ull << (2 * half_bits)) < n) ++half_bits;
    mask = (1u << half_bits) - 1u;
    key = mix32(uint32_t(seed) ^ mix32(uint32_t(seed >> 32) + 0x9e3779b9U * (epoch + 1)));
  }

  // One pass of the network over the even-bit domain: a bijection of [0, 4^half_bits), without
  // branches, so that a CPU loop over many x vectorizes.
  MF_HD uint32_t encrypt(uint32_t x) const {
    uint32_t left = x >> half_bits, right = x & mask;
    for (uint32_t round = 0; round < 4; ++round) {
      const uint32_t f = mix32(right ^ key ^ (round * 0x85ebca6bU)) & mask;
      const uint32_t next = left ^ f;
      left = right;
      right = next;
    }
    return (left << half_bits) | right;
  }

  // Index i's place: encrypted until it lands in [0, n) (cycle walking; the domain is under 4n, so
  // fewer than 4 passes on average).
  MF_HD uint32_t walk_from(uint32_t x) const {
    while (x >= n) x = encrypt(x);
    return x;
  }
  MF_HD uint32_t operator()(uint32_t i) const { return walk_from(encrypt(i)); }
};

MF_HD uint32_t permute_index(uint32_t i, uint32_t n, uint64_t seed, uint32_t epoch) {
  return Permutation(n, seed, epoch)(i);
}

}  // namespace mf
