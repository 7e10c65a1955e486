#pragma once
// The loss of one row of outputs, its accuracy and its gradient, in one pass.
// The CPU backend loops it over rows; the CUDA kernel runs it one thread per row
// (output widths are small: classes or regression targets).
#include "kernels/element_math.h"

namespace mf {

// out(n): logits for the cross-entropies, activations for mse. target: a class
// index (sparse_categorical_crossentropy) or n values. scale = loss_grad_scale().
MF_HD void loss_row(Loss loss, const float* out, const float* target, float* d_out, int n, float scale,
                    float& row_loss, float& row_correct) {
  if (loss == Loss::sparse_categorical_crossentropy) {
    const int label = int(target[0]);
    float max = out[0];
    for (int j = 1; j < n; ++j) max = fmaxf(max, out[j]);
    float sum = 0.f;
    for (int j = 0; j < n; ++j) sum += expf(out[j] - max);
    // Keras's sparse_categorical_accuracy: the first argmax of the softmax probabilities (two
    // logits that differ can round to one probability: a tie, won by the lower index).
    int argmax = 0;
    float best = -1.f;
    for (int j = 0; j < n; ++j) {
      const float p = expf(out[j] - max) / sum;
      if (p > best) best = p, argmax = j;
      d_out[j] = (p - (j == label ? 1.f : 0.f)) * scale;
    }
    row_loss = logf(sum) + max - out[label];  // -log softmax(out)[label]
    row_correct = argmax == label ? 1.f : 0.f;
    return;
  }
  float total = 0.f, correct = 0.f;
  for (int j = 0; j < n; ++j) {
    const float z = out[j], t = target[j];
    if (loss == Loss::binary_crossentropy) {
      const BceOfLogit bce = bce_from_logit(z, t);
      total += bce.loss;
      d_out[j] = (bce.probability - t) * scale;
      // Keras's binary_accuracy: the float32 probability above 0.5 (a logit of 1e-8 gives exactly 0.5: 0).
      correct += ((bce.probability > 0.5f) == (t > 0.5f)) ? 1.f : 0.f;
    } else {
      const float d = z - t;
      total += d * d;
      d_out[j] = 2.f * d * scale;
    }
  }
  row_loss = total / float(n);
  row_correct = correct / float(n);
}

// Sparse categorical cross-entropy of a row of probabilities p(n) that a library
// softmax computed (the cuDNN reference path): the same loss, gradient and
// accuracy as loss_row() from logits, up to rounding. d_out may alias p.
MF_HD void crossentropy_row_from_probabilities(const float* p, int label, float* d_out, int n, float scale,
                                               float& row_loss, float& row_correct) {
  int argmax = 0;
  for (int j = 1; j < n; ++j)
    if (p[j] > p[argmax]) argmax = j;
  row_loss = -logf(fmaxf(p[label], 1e-30f));
  row_correct = argmax == label ? 1.f : 0.f;
  for (int j = 0; j < n; ++j) d_out[j] = (p[j] - (j == label ? 1.f : 0.f)) * scale;
}

}  // namespace mf
