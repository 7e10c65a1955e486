#pragma once
// The element-wise activations, each in one place: its enum value, its Keras name, its forward and
// its derivative, shared by the CPU backend and the CUDA kernels (a Dense's epilogue, an Activation
// layer, the backward through either). An activation is added here alone: nn/spec.h parses the
// names, the kernels switch on the enum, and the tests' references (tests/unit/test_gradients.cpp,
// tests/parity/test_kernel_parity.cpp) list it.
#include <cmath>

#include "kernels/hd.h"
#include "runtime/names.h"

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
  leaky_relu = 10,
  mish = 11,
  softsign = 12
};
inline constexpr int kActivationCount = int(Activation::softsign) + 1;

// The names a spec and Keras give them (keras.activations.*), in the enum's order, then Keras's
// other names (the first of a value's is the one written back).
inline constexpr Named<Activation> kActivationNames[] = {{"linear", Activation::linear},
                                                         {"relu", Activation::relu},
                                                         {"sigmoid", Activation::sigmoid},
                                                         {"tanh", Activation::tanh},
                                                         {"softmax", Activation::softmax},
                                                         {"gelu", Activation::gelu},
                                                         {"swish", Activation::swish},
                                                         {"elu", Activation::elu},
                                                         {"selu", Activation::selu},
                                                         {"softplus", Activation::softplus},
                                                         {"leaky_relu", Activation::leaky_relu},
                                                         {"mish", Activation::mish},
                                                         {"softsign", Activation::softsign},
                                                         {"silu", Activation::swish}};

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

// tf.nn.softplus: log(1 + exp(z)), z itself past the threshold and exp(z) below its negative.
MF_HD float softplus(float z) {
  return z > -kSoftplusThreshold ? z : z < kSoftplusThreshold ? expf(z) : logf(expf(z) + 1.f);
}

// Element-wise activations as Keras 3 computes them on TensorFlow; softmax is a row operation and
// never reaches here. gelu is the exact one (keras.activations.gelu's approximate=False):
// 0.5 z erfc(-z/sqrt(2)); swish is silu, z sigmoid(z); mish is z tanh(softplus(z)) (Misra, 2019;
// keras.activations.mish); softsign is z / (1 + |z|) (tf.nn.softsign).
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
      return softplus(z);
    case Activation::leaky_relu:
      return z > 0.f ? z : z * kLeakyReluSlope;
    case Activation::mish:
      return z * tanhf(softplus(z));
    case Activation::softsign:
      return z / (1.f + fabsf(z));
    default:
      return z;
  }
}

// Whether act'(z) needs the pre-activation z: gelu, swish and mish are not monotonic, so their
// output does not tell z; softsign's TensorFlow gradient is taken from z (1 - |y| rounds
// differently). A layer with one of them keeps z beside its output y.
MF_HD bool needs_pre_activation(Activation a) {
  return a == Activation::gelu || a == Activation::swish || a == Activation::mish ||
         a == Activation::softsign;
}

// d act / d z, from the output y = act(z) where that tells it (so backward needs only the stored
// output of each layer), else from z (needs_pre_activation). The forms are TensorFlow's gradients:
// EluGrad and SeluGrad from the output, softplus's sigmoid(z) = 1 - exp(-y), and mish's the
// product rule through tanh (1 - t^2) and softplus (SoftplusGrad: 1 / (1 + exp(-z))), and
// SoftsignGrad's 1 / (1 + |z|)^2.
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
    case Activation::mish: {
      const float t = tanhf(softplus(z));
      return t + z * (1.f - t * t) / (1.f + expf(-z));
    }
    case Activation::softsign: {
      const float d = 1.f + fabsf(z);
      return 1.f / (d * d);
    }
    default:
      return 1.f;
  }
}

}  // namespace mf
