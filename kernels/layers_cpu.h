#pragma once
// CPU references of the layers beside Dense (kernels/activation.cu, dropout.cu, batch_norm.cu,
// regularizers.cu), on one member's buffers. The element-wise ones take a range [begin, end) of
// the (m, n) batch's elements, so that a model alone can split them over threads; their Through's
// buffers are indexed like the batch.
#include <cstdint>

#include "kernels/layer_math.h"

namespace mf::cpu {

// Y[i] = act(X[i]).
void activation_forward(const float* X, float* Y, int64_t begin, int64_t end, Activation act);
// dX[i] = below(own(dY[i])); dX may alias dY.
void activation_backward(const float* dY, float* dX, int64_t begin, int64_t end, const Through& own,
                         const Through& below);
// Y[i] = dropout of X[i] (or of a gradient: the same mask and scale), then through `below`; Y may
// alias X.
void dropout(const float* X, float* Y, int64_t begin, int64_t end, const LayerSettings& s,
             uint64_t seed, int layer, int64_t step, const Through& below = {});
// Columns [c_begin, c_end) of a batch normalization's training forward, inference forward and
// backward.
void batch_norm_train(const float* X, float* Y, int m, int n, const BatchNormBuffers& b,
                      const LayerSettings& s, int c_begin, int c_end);
void batch_norm_infer(const float* X, float* Y, int m, int n, const BatchNormBuffers& b,
                      const LayerSettings& s, int c_begin, int c_end);
void batch_norm_backward(const float* X, const float* dY, float* dX, int m, int n,
                         const BatchNormBuffers& b, const Through& below, int c_begin, int c_end);
// partials[block] for blocks [0, blocks) of Y(count): each kParamBlock elements' penalty.
void activity_penalty(const float* Y, int64_t count, const Regularizer& r, double* partials,
                      int blocks);
// dX[i] = own(dY[i] + d(penalty / m)/dy) from own.y; dX may alias dY.
void activity_backward(const float* dY, float* dX, int64_t begin, int64_t end, int m,
                       const Regularizer& r, const Through& own);

}  // namespace mf::cpu
