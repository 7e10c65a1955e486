// The cuBLAS reference path for the dense-layer products (GPU only, never the
// default): parity and benchmarks measure our tiled GEMM against it. cuBLAS is
// loaded at the first use (runtime/shared_library.h), not linked.
//
// cuBLAS is column-major; a row-major C(M,N) is a column-major Cᵀ(N,M), so
// C = op(A)·op(B) is computed as Cᵀ = op(B)ᵀ·op(A)ᵀ with the operands swapped.
#include <cublas_v2.h>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/gemm_products.h"
#include "runtime/shared_library.h"

namespace mf::gpu {
namespace {

// The cuBLAS entry points multifit calls, with the types of the header it was built against.
struct CublasApi {
  SharedLibrary library;
  decltype(&cublasCreate_v2) create = lookup<decltype(create)>(library, "cublasCreate_v2");
  decltype(&cublasDestroy_v2) destroy = lookup<decltype(destroy)>(library, "cublasDestroy_v2");
  decltype(&cublasSetStream_v2) set_stream =
      lookup<decltype(set_stream)>(library, "cublasSetStream_v2");
  decltype(&cublasSgemm_v2) sgemm = lookup<decltype(sgemm)>(library, "cublasSgemm_v2");
  decltype(&cublasGetStatusString) status_string =
      lookup<decltype(status_string)>(library, "cublasGetStatusString");
};

// Loaded once, at the first call; a failed load throws and is tried again at the next call.
const CublasApi& cublas() {
  static const CublasApi api{
      SharedLibrary("libcublas.so." + std::to_string(CUBLAS_VER_MAJOR), "--gemm cublas")};
  return api;
}

#define MF_CUBLAS_CHECK(call) MF_LIBRARY_CHECK(call, CUBLAS_STATUS_SUCCESS, cublas().status_string)

class CublasProducts final : public GemmProducts {
 public:
  CublasProducts() { MF_CUBLAS_CHECK(cublas().create(&handle_)); }
  ~CublasProducts() override { cublas().destroy(handle_); }

  void product(const float* A, const float* B, float* C, int m, int k, int n,
               cudaStream_t stream) override {
    // Cᵀ(n,m) = Bᵀ(n,k)·Aᵀ(k,m)
    sgemm(CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, B, n, A, k, C, n, stream);
  }
  bool fuses_gather() const override { return false; }  // cuBLAS reads a gathered batch
  // One cublasSgemm per member: a reference path, not a packed one.
  void forward(const float* X, const float* W, const float* b, float* Y, float* Z, int m, int k,
               int n, Activation act, const int* /*rows: never*/, const Pack& pack,
               cudaStream_t stream) override {
    // The plain products, then the bias+activation epilogue as its own kernel.
    for (int z = 0; z < pack.count; ++z)
      product(member(X, z, pack.data_stride), member(W, z, pack.stride), member(Y, z, pack.stride),
              m, k, n, stream);
    if (b || Z || act != Activation::linear) bias_activation(Y, b, Z, m, n, act, pack, stream);
  }
  void backward_input(const float* dZ, const float* W, float* dX, int m, int k, int n,
                      const Through& below, const Pack& pack, cudaStream_t stream) override {
    // dXᵀ(k,m) = W(k,n)·dZᵀ(n,m): W row-major (k,n) is column-major (n,k), transposed.
    for (int z = 0; z < pack.count; ++z)
      sgemm(CUBLAS_OP_T, CUBLAS_OP_N, k, m, n, member(W, z, pack.stride), n,
            member(dZ, z, pack.stride), n, member(dX, z, pack.stride), k, stream);
    // the epilogue, apart
    if (below.any()) activation_backward(dX, dX, int64_t(m) * k, below, {}, pack, stream);
  }
  void backward_params(const float* X, const float* dZ, float* dW, float* db, int m, int k, int n,
                       const int* /*rows: never*/, const Pack& pack, cudaStream_t stream) override {
    // dWᵀ(n,k) = dZᵀ(n,m)·X(m,k): X row-major (m,k) is column-major (k,m), transposed.
    for (int z = 0; z < pack.count; ++z)
      sgemm(CUBLAS_OP_N, CUBLAS_OP_T, n, k, m, member(dZ, z, pack.stride), n,
            member(X, z, pack.data_stride), k, member(dW, z, pack.stride), n, stream);
    if (db) bias_grad(dZ, db, m, n, pack, stream);
  }

 private:
  void sgemm(cublasOperation_t op_a, cublasOperation_t op_b, int rows, int cols, int inner,
             const float* A, int lda, const float* B, int ldb, float* C, int ldc,
             cudaStream_t stream) {
    const float one = 1.f, zero = 0.f;
    MF_CUBLAS_CHECK(cublas().set_stream(handle_, stream));
    MF_CUBLAS_CHECK(cublas().sgemm(handle_, op_a, op_b, rows, cols, inner, &one, A, lda, B, ldb,
                                   &zero, C, ldc));
  }

  cublasHandle_t handle_ = nullptr;
};

}  // namespace

std::unique_ptr<GemmProducts> make_cublas_products() { return std::make_unique<CublasProducts>(); }

std::string cublas_library() { return cublas().library.path(); }

}  // namespace mf::gpu
