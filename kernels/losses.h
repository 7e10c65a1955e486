#pragma once
// The losses, each in one place: its enum value, its Keras names and, for the element-wise ones,
// its term and derivative, shared by the CPU backend and the CUDA kernels (kernels/loss_row.h runs
// a row; nn/spec_loss.cpp reads a spec's loss by these names). Keras 3's formulas:
// keras/src/losses/losses.py.
#include <cmath>

#include "kernels/activations.h"
#include "kernels/hd.h"
#include "runtime/names.h"

namespace mf {

// Order is part of the report's and the weights file's forms; append only.
enum class Loss : int {
  mse = 0,
  binary_crossentropy = 1,
  sparse_categorical_crossentropy = 2,
  categorical_crossentropy = 3,
  mean_absolute_error = 4,
  huber = 5,
  log_cosh = 6,
  mean_squared_logarithmic_error = 7
};

// The names a spec and Keras give them (keras.losses.*): the first of a loss's is the one written
// back.
inline constexpr KerasName<Loss> kLossNames[] = {
    {"mse", "MeanSquaredError", Loss::mse},
    {"mean_squared_error", "MeanSquaredError", Loss::mse},
    {"mae", "MeanAbsoluteError", Loss::mean_absolute_error},
    {"mean_absolute_error", "MeanAbsoluteError", Loss::mean_absolute_error},
    {"binary_crossentropy", "BinaryCrossentropy", Loss::binary_crossentropy},
    {"categorical_crossentropy", "CategoricalCrossentropy", Loss::categorical_crossentropy},
    {"sparse_categorical_crossentropy", "SparseCategoricalCrossentropy",
     Loss::sparse_categorical_crossentropy},
    {"huber", "Huber", Loss::huber},
    {"log_cosh", "LogCosh", Loss::log_cosh},
    {"logcosh", "LogCosh", Loss::log_cosh},
    {"msle", "MeanSquaredLogarithmicError", Loss::mean_squared_logarithmic_error},
    {"mean_squared_logarithmic_error", "MeanSquaredLogarithmicError",
     Loss::mean_squared_logarithmic_error}};

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

// One output's term of an element-wise loss (a row's loss is their mean) and its derivative by the
// output z, against its target t, as TensorFlow differentiates Keras's formula; `delta` is Huber's.
// The cross-entropies take logits and are kernels/loss_row.h's.
struct ElementLoss {
  float term, grad;
};
MF_HD ElementLoss element_loss(Loss loss, float z, float t, float delta) {
  const float e = z - t;
  switch (loss) {
    case Loss::mean_absolute_error:
      return {fabsf(e), e > 0.f ? 1.f : e < 0.f ? -1.f : 0.f};
    case Loss::huber: {  // 0.5 e^2 within delta, delta (|e| - 0.5 delta) past it (Huber, 1964)
      const float magnitude = fabsf(e);
      if (magnitude <= delta) return {0.5f * (e * e), e};
      return {delta * magnitude - 0.5f * (delta * delta), delta * (e > 0.f ? 1.f : -1.f)};
    }
    case Loss::log_cosh:  // log(cosh(e)) = e + softplus(-2e) - log(2)
      return {e + softplus(-2.f * e) - 0.6931472f, 1.f - 2.f * sigmoid(-2.f * e)};
    case Loss::mean_squared_logarithmic_error: {
      // (log(max(z, eps) + 1) - log(max(t, eps) + 1))^2, eps = keras.backend.epsilon(); maximum's
      // gradient goes to z where z >= eps (TensorFlow's MaximumGrad).
      constexpr float kEpsilon = 1e-7f;
      const float above = fmaxf(z, kEpsilon) + 1.f;
      const float d = logf(above) - logf(fmaxf(t, kEpsilon) + 1.f);
      return {d * d, z >= kEpsilon ? 2.f * d / above : 0.f};
    }
    default:  // mse
      return {e * e, 2.f * e};
  }
}

}  // namespace mf
