#pragma once
// Activations and softmax computed by a library (cuDNN), the reference path for
// parity and benchmarks; our kernels are the default.
#include <memory>

#include "kernels/kernels.h"

namespace mf::MF_TARGET {

struct LibraryActivations {
  virtual ~LibraryActivations() = default;
  // Y(count) = act(Y), in place; act is relu, sigmoid or tanh.
  virtual void forward(float* Y, int64_t count, Activation act, cudaStream_t stream) = 0;
  // dZ = dY ⊙ act'(.) from the output Y; dZ may alias dY.
  virtual void backward(const float* Y, const float* dY, float* dZ, int64_t count, Activation act,
                        cudaStream_t stream) = 0;
  // probabilities(m,n) = softmax of each row of logits(m,n).
  virtual void softmax(const float* logits, float* probabilities, int m, int n, cudaStream_t stream) = 0;
};

#if defined(MF_HAVE_CUDNN) && !defined(MF_HOST_EXEC)
std::unique_ptr<LibraryActivations> make_cudnn_activations();
#endif

}  // namespace mf::MF_TARGET
