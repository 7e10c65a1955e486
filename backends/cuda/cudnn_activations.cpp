// The cuDNN reference path for activations and softmax (GPU only, never the
// default): parity and benchmarks measure our kernels against it. cuDNN is
// loaded at the first use (runtime/shared_library.h), not linked.
//
// These are cuDNN's legacy single-operation calls, which cuDNN 9 marks
// deprecated in favour of its graph API. We keep them on purpose: the graph API
// builds and compiles a fused engine for each operation graph (pointwise graphs
// through run-time compilation), so it would measure cuDNN's code generator and
// need NVRTC on the GPU machine, where a reference for one element-wise pass
// should be one library kernel. cuDNN 9 still ships these calls (libcudnn_ops).
#include <cudnn.h>

#include <climits>
#include <stdexcept>
#include <string>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/library_activations.h"
#include "runtime/shared_library.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // the legacy calls, on purpose (above)

namespace mf::gpu {
namespace {

// The cuDNN entry points multifit calls, with the types of the header it was built against.
struct CudnnApi {
  SharedLibrary library;
#define MF_CUDNN_ENTRY(name) \
  decltype(&cudnn##name) name = lookup<decltype(name)>(library, "cudnn" #name)
  MF_CUDNN_ENTRY(Create);
  MF_CUDNN_ENTRY(Destroy);
  MF_CUDNN_ENTRY(SetStream);
  MF_CUDNN_ENTRY(GetErrorString);
  MF_CUDNN_ENTRY(CreateTensorDescriptor);
  MF_CUDNN_ENTRY(DestroyTensorDescriptor);
  MF_CUDNN_ENTRY(SetTensor4dDescriptor);
  MF_CUDNN_ENTRY(CreateActivationDescriptor);
  MF_CUDNN_ENTRY(DestroyActivationDescriptor);
  MF_CUDNN_ENTRY(SetActivationDescriptor);
  MF_CUDNN_ENTRY(ActivationForward);
  MF_CUDNN_ENTRY(ActivationBackward);
  MF_CUDNN_ENTRY(SoftmaxForward);
#undef MF_CUDNN_ENTRY
};

// Loaded once, at the first call; a failed load throws and is tried again at the next call.
const CudnnApi& cudnn() {
  static const CudnnApi api{
      SharedLibrary("libcudnn.so." + std::to_string(CUDNN_MAJOR), "--activations cudnn")};
  return api;
}

#define MF_CUDNN_CHECK(call) MF_LIBRARY_CHECK(call, CUDNN_STATUS_SUCCESS, cudnn().GetErrorString)

cudnnActivationMode_t mode_of(Activation act) {
  switch (act) {
    case Activation::relu:
      return CUDNN_ACTIVATION_RELU;
    case Activation::sigmoid:
      return CUDNN_ACTIVATION_SIGMOID;
    case Activation::tanh:
      return CUDNN_ACTIVATION_TANH;
    default:
      throw std::logic_error("cuDNN has no activation for linear or softmax here");
  }
}

class CudnnActivations final : public LibraryActivations {
 public:
  CudnnActivations() {
    try {
      MF_CUDNN_CHECK(cudnn().Create(&handle_));
      MF_CUDNN_CHECK(cudnn().CreateTensorDescriptor(&tensor_));
      MF_CUDNN_CHECK(cudnn().CreateActivationDescriptor(&activation_));
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudnnActivations() override { release(); }

  bool has_forward(Activation act) const override {
    return act == Activation::relu || act == Activation::sigmoid || act == Activation::tanh;
  }
  void forward(float* Y, int64_t count, Activation act, cudaStream_t stream) override {
    prepare(act, count, stream);
    MF_CUDNN_CHECK(
        cudnn().ActivationForward(handle_, activation_, &one_, tensor_, Y, &zero_, tensor_, Y));
  }

  bool has_backward(Activation act) const override { return act == Activation::relu; }

  void backward(const float* Y, const float* dY, float* dZ, int64_t count, Activation act,
                cudaStream_t stream) override {
    if (!has_backward(act)) throw std::logic_error("cuDNN backward is used for relu only");
    prepare(act, count, stream);
    // cuDNN's backward takes the forward input x and output y. A layer keeps only y; for relu
    // y > 0 exactly where x > 0, so y stands in for x and the derivative is exact whichever
    // cuDNN reads. (For sigmoid and tanh it would hold only if cuDNN read y: not promised.)
    MF_CUDNN_CHECK(cudnn().ActivationBackward(handle_, activation_, &one_, tensor_, Y, tensor_, dY,
                                              tensor_, Y, &zero_, tensor_, dZ));
  }

  void softmax(const float* logits, float* probabilities, int m, int n,
               cudaStream_t stream) override {
    MF_CUDNN_CHECK(cudnn().SetStream(handle_, stream));
    MF_CUDNN_CHECK(
        cudnn().SetTensor4dDescriptor(tensor_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, m, n, 1, 1));
    MF_CUDNN_CHECK(cudnn().SoftmaxForward(handle_, CUDNN_SOFTMAX_ACCURATE,
                                          CUDNN_SOFTMAX_MODE_INSTANCE, &one_, tensor_, logits,
                                          &zero_, tensor_, probabilities));
  }

 private:
  // A flat tensor of `count` elements: one image of `count` channels (cuDNN counts in int).
  void prepare(Activation act, int64_t count, cudaStream_t stream) {
    if (count > INT_MAX) throw std::length_error("cuDNN activations take at most 2^31-1 elements");
    MF_CUDNN_CHECK(cudnn().SetStream(handle_, stream));
    MF_CUDNN_CHECK(cudnn().SetTensor4dDescriptor(tensor_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1,
                                                 int(count), 1, 1));
    MF_CUDNN_CHECK(
        cudnn().SetActivationDescriptor(activation_, mode_of(act), CUDNN_NOT_PROPAGATE_NAN, 0.0));
  }

  void release() {
    if (activation_) cudnn().DestroyActivationDescriptor(activation_);
    if (tensor_) cudnn().DestroyTensorDescriptor(tensor_);
    if (handle_) cudnn().Destroy(handle_);
  }

  cudnnHandle_t handle_ = nullptr;
  cudnnTensorDescriptor_t tensor_ = nullptr;
  cudnnActivationDescriptor_t activation_ = nullptr;
  const float one_ = 1.f, zero_ = 0.f;
};

}  // namespace

std::unique_ptr<LibraryActivations> make_cudnn_activations() {
  return std::make_unique<CudnnActivations>();
}

std::string cudnn_library() { return cudnn().library.path(); }

}  // namespace mf::gpu
