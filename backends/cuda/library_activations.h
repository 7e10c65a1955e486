#pragma once
// Activations and softmax computed by a library (cuDNN), the reference path for
// parity and benchmarks; our kernels are the default.
#include <memory>

#include "kernels/kernels.h"

namespace mf::MF_TARGET {

struct LibraryActivations {
  virtual ~LibraryActivations() = default;
  // Whether forward() computes `act` (cuDNN's relu, sigmoid and tanh); the others run our kernels.
  virtual bool has_forward(Activation act) const = 0;
  // Y(count) = act(Y), in place, for an act with has_forward.
  virtual void forward(float* Y, int64_t count, Activation act, cudaStream_t stream) = 0;
  // Whether backward() is exact for `act` from the output alone (the layer keeps no input).
  virtual bool has_backward(Activation act) const = 0;
  // dZ = dY ⊙ act'(.) from the output Y, for an act with has_backward; dZ may alias dY.
  virtual void backward(const float* Y, const float* dY, float* dZ, int64_t count, Activation act,
                        cudaStream_t stream) = 0;
  // probabilities(m,n) = softmax of each row of logits(m,n).
  virtual void softmax(const float* logits, float* probabilities, int m, int n,
                       cudaStream_t stream) = 0;
};

#if defined(MF_HAVE_CUDNN) && !defined(MF_HOST_EXEC)
// Loads cuDNN at the first call; a UserError names the library when it cannot be loaded.
std::unique_ptr<LibraryActivations> make_cudnn_activations();
#endif

}  // namespace mf::MF_TARGET
