// The cuBLAS reference path for the dense-layer products (GPU only, never the
// default): parity and benchmarks measure our tiled GEMM against it.
//
// cuBLAS is column-major; a row-major C(M,N) is a column-major Cᵀ(N,M), so
// C = op(A)·op(B) is computed as Cᵀ = op(B)ᵀ·op(A)ᵀ with the operands swapped.
#include <cublas_v2.h>

#include "nn/gemm_products.h"

namespace mf::gpu {
namespace {

#define MF_CUBLAS_CHECK(call)                                                      \
  do {                                                                             \
    const cublasStatus_t status_ = (call);                                         \
    if (status_ != CUBLAS_STATUS_SUCCESS)                                          \
      throw_cuda_error(#call, __FILE__, __LINE__, cublasGetStatusString(status_)); \
  } while (0)

class CublasProducts final : public GemmProducts {
 public:
  CublasProducts() { MF_CUBLAS_CHECK(cublasCreate(&handle_)); }
  ~CublasProducts() override { cublasDestroy(handle_); }

  void forward(const float* X, const float* W, const float* b, float* Y, int m, int k, int n, Activation act,
               cudaStream_t stream) override {
    // Yᵀ(n,m) = Wᵀ(n,k)·Xᵀ(k,m), then the bias+activation epilogue as its own kernel.
    sgemm(CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, W, n, X, k, Y, n, stream);
    bias_activation(Y, b, m, n, act, stream);
  }
  void backward_input(const float* dZ, const float* W, float* dX, int m, int k, int n,
                      cudaStream_t stream) override {
    // dXᵀ(k,m) = W(k,n)·dZᵀ(n,m): W row-major (k,n) is column-major (n,k), transposed.
    sgemm(CUBLAS_OP_T, CUBLAS_OP_N, k, m, n, W, n, dZ, n, dX, k, stream);
  }
  void backward_weights(const float* X, const float* dZ, float* dW, int m, int k, int n,
                        cudaStream_t stream) override {
    // dWᵀ(n,k) = dZᵀ(n,m)·X(m,k): X row-major (m,k) is column-major (k,m), transposed.
    sgemm(CUBLAS_OP_N, CUBLAS_OP_T, n, k, m, dZ, n, X, k, dW, n, stream);
  }

 private:
  void sgemm(cublasOperation_t op_a, cublasOperation_t op_b, int rows, int cols, int inner, const float* A,
             int lda, const float* B, int ldb, float* C, int ldc, cudaStream_t stream) {
    const float one = 1.f, zero = 0.f;
    MF_CUBLAS_CHECK(cublasSetStream(handle_, stream));
    MF_CUBLAS_CHECK(cublasSgemm(handle_, op_a, op_b, rows, cols, inner, &one, A, lda, B, ldb, &zero, C, ldc));
  }

  cublasHandle_t handle_ = nullptr;
};

}  // namespace

std::unique_ptr<GemmProducts> make_cublas_products() { return std::make_unique<CublasProducts>(); }

}  // namespace mf::gpu
