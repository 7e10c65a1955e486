#pragma once
// The three products of a dense layer, by one GEMM implementation: our tiled
// kernels (both targets) or cuBLAS (the GPU reference path). Each serves a pack, with its strides
// as in backends/backend.h.
#include <memory>

#include "kernels/kernels.h"

namespace mf::MF_TARGET {

struct GemmProducts {
  virtual ~GemmProducts() = default;
  // C(m,n) = A(m,k)·B(k,n), the plain product: what the benchmarks set against cublasSgemm.
  virtual void product(const float* A, const float* B, float* C, int m, int k, int n,
                       cudaStream_t stream) = 0;
  // Whether forward and backward_params take `rows`: X read from the data set by row index.
  virtual bool fuses_gather() const = 0;
  // Y(m,n) = act(X(m,k)·W(k,n) + b) (b null: none), Z = X·W + b where Z is given
  virtual void forward(const float* X, const float* W, const float* b, float* Y, float* Z, int m,
                       int k, int n, Activation act, const int* rows, const Pack& pack,
                       cudaStream_t stream) = 0;
  // dX(m,k) = dZ(m,n)·W(k,n)ᵀ, through the layer below's activation (none: the product)
  virtual void backward_input(const float* dZ, const float* W, float* dX, int m, int k, int n,
                              const Through& below, const Pack& pack, cudaStream_t stream) = 0;
  // dW(k,n) = X(m,k)ᵀ·dZ(m,n);  db(n) = column sums of dZ (db null: none)
  virtual void backward_params(const float* X, const float* dZ, float* dW, float* db, int m, int k,
                               int n, const int* rows, const Pack& pack, cudaStream_t stream) = 0;
};

std::unique_ptr<GemmProducts> make_tiled_products();
#if !defined(MF_HOST_EXEC)
// Loads cuBLAS at the first call; a UserError names the library when it cannot be loaded.
std::unique_ptr<GemmProducts> make_cublas_products();
#endif

}  // namespace mf::MF_TARGET
