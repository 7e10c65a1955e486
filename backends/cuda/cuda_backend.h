#pragma once
// The CUDA backend: our hand-written kernels (kernels/kernels.h), every call on
// the backend's own stream. Built twice: mf::gpu runs on a GPU, mf::hostexec
// runs the same kernel code through host execution (tests on machines without
// a GPU).
#include <memory>
#include <string>

#include "backends/backend.h"
#include "runtime/names.h"

namespace mf {

class GreenContext;  // runtime/green_context.h

// The reference paths, GPU only: cuBLAS for the products, cuDNN for activations and softmax.
enum class GemmImpl { tiled, cublas };
inline constexpr Named<GemmImpl> kGemmImplNames[] = {{"tiled", GemmImpl::tiled},
                                                     {"cublas", GemmImpl::cublas}};
enum class ActivationImpl { ours, cudnn };
inline constexpr Named<ActivationImpl> kActivationImplNames[] = {{"ours", ActivationImpl::ours},
                                                                 {"cudnn", ActivationImpl::cudnn}};

struct CudaOptions {
  int device = 0;
  GemmImpl gemm = GemmImpl::tiled;
  ActivationImpl activations = ActivationImpl::ours;
  // The SMs the backend's kernels run on: its stream is made on this green context (of `device`),
  // which the backend holds until its stream is gone; none: the whole GPU. A GPU's only: host
  // execution refuses it (UserError).
  std::shared_ptr<const GreenContext> partition = nullptr;
};

namespace gpu {
std::unique_ptr<Backend> make_cuda_backend(const CudaOptions& options);
// Where the reference libraries were loaded from; each loads its library (a UserError when it
// cannot).
std::string cublas_library();
#if defined(MF_HAVE_CUDNN)
std::string cudnn_library();
#endif
}  // namespace gpu
namespace hostexec {
std::unique_ptr<Backend> make_cuda_backend(const CudaOptions& options);
}

}  // namespace mf
