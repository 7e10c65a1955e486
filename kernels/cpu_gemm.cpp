#include "kernels/cpu_gemm.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/libxsmm.h"
#include "kernels/openblas.h"

namespace mf::cpu {

bool takes_libxsmm(bool /*trans_a*/, bool /*trans_b*/, int m, int n, int k) {
  return n >= 10 && int64_t(m) * n * k >= (int64_t(1) << 17);
}

void product(bool trans_a, bool trans_b, int m, int n, int k, const float* A, int lda,
             const float* B, int ldb, float* C, int ldc) {
  if (takes_libxsmm(trans_a, trans_b, m, n, k)) {
    if (!trans_b) {
      if (const SmallKernel kernel = libxsmm_kernel(trans_a, false, m, n, k, lda, ldb, ldc))
        return kernel(A, B, C);
    } else if (const SmallKernel kernel = libxsmm_kernel(trans_a, false, m, n, k, lda, n, ldc)) {
      thread_local std::vector<float> op_b;  // op(B), (k, n): grows to the largest, then reused
      op_b.resize(std::max(op_b.size(), size_t(k) * n));
      transpose(B, n, k, ldb, op_b.data(), n);
      return kernel(A, op_b.data(), C);
    }
  }
  sgemm(trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, A, lda,
        B, ldb, C, ldc);
}

}  // namespace mf::cpu
