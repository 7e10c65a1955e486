// The cuDNN reference path for activations and softmax (GPU only, never the
// default): parity and benchmarks measure our kernels against it.
#include <cudnn.h>

#include <climits>
#include <stdexcept>
#include <string>

#include "nn/library_activations.h"

namespace mf::gpu {
namespace {

#define MF_CUDNN_CHECK(call)                                                     \
  do {                                                                           \
    const cudnnStatus_t status_ = (call);                                        \
    if (status_ != CUDNN_STATUS_SUCCESS)                                         \
      throw_cuda_error(#call, __FILE__, __LINE__, cudnnGetErrorString(status_)); \
  } while (0)

cudnnActivationMode_t mode_of(Activation act) {
  switch (act) {
    case Activation::relu: return CUDNN_ACTIVATION_RELU;
    case Activation::sigmoid: return CUDNN_ACTIVATION_SIGMOID;
    case Activation::tanh: return CUDNN_ACTIVATION_TANH;
    default: throw std::logic_error("cuDNN has no activation for linear or softmax here");
  }
}

class CudnnActivations final : public LibraryActivations {
 public:
  CudnnActivations() {
    try {
      MF_CUDNN_CHECK(cudnnCreate(&handle_));
      MF_CUDNN_CHECK(cudnnCreateTensorDescriptor(&tensor_));
      MF_CUDNN_CHECK(cudnnCreateActivationDescriptor(&activation_));
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudnnActivations() override { release(); }

  void forward(float* Y, int64_t count, Activation act, cudaStream_t stream) override {
    prepare(act, count, stream);
    MF_CUDNN_CHECK(cudnnActivationForward(handle_, activation_, &one_, tensor_, Y, &zero_, tensor_, Y));
  }

  void backward(const float* Y, const float* dY, float* dZ, int64_t count, Activation act,
                cudaStream_t stream) override {
    prepare(act, count, stream);
    // relu, sigmoid and tanh have derivatives in terms of the output, which is all a layer keeps;
    // for relu the output's sign is the input's, so the output stands in for the input too.
    MF_CUDNN_CHECK(cudnnActivationBackward(handle_, activation_, &one_, tensor_, Y, tensor_, dY, tensor_, Y,
                                           &zero_, tensor_, dZ));
  }

  void softmax(const float* logits, float* probabilities, int m, int n, cudaStream_t stream) override {
    MF_CUDNN_CHECK(cudnnSetStream(handle_, stream));
    MF_CUDNN_CHECK(cudnnSetTensor4dDescriptor(tensor_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, m, n, 1, 1));
    MF_CUDNN_CHECK(cudnnSoftmaxForward(handle_, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one_, tensor_,
                                       logits, &zero_, tensor_, probabilities));
  }

 private:
  // A flat tensor of `count` elements: one image of `count` channels (cuDNN counts in int).
  void prepare(Activation act, int64_t count, cudaStream_t stream) {
    if (count > INT_MAX) throw std::length_error("cuDNN activations take at most 2^31-1 elements");
    MF_CUDNN_CHECK(cudnnSetStream(handle_, stream));
    MF_CUDNN_CHECK(cudnnSetTensor4dDescriptor(tensor_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, int(count), 1, 1));
    MF_CUDNN_CHECK(cudnnSetActivationDescriptor(activation_, mode_of(act), CUDNN_NOT_PROPAGATE_NAN, 0.0));
  }

  void release() {
    if (activation_) cudnnDestroyActivationDescriptor(activation_);
    if (tensor_) cudnnDestroyTensorDescriptor(tensor_);
    if (handle_) cudnnDestroy(handle_);
  }

  cudnnHandle_t handle_ = nullptr;
  cudnnTensorDescriptor_t tensor_ = nullptr;
  cudnnActivationDescriptor_t activation_ = nullptr;
  const float one_ = 1.f, zero_ = 0.f;
};

}  // namespace

std::unique_ptr<LibraryActivations> make_cudnn_activations() { return std::make_unique<CudnnActivations>(); }

}  // namespace mf::gpu
