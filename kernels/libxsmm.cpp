#include "kernels/libxsmm.h"

#include <libxsmm.h>

#include <array>
#include <string>
#include <unordered_map>

namespace mf::cpu {
namespace {

using Key = std::array<int, 8>;  // trans_a, trans_b, m, n, k, lda, ldb, ldc

struct KeyHash {
  size_t operator()(const Key& key) const {
    size_t h = 0;
    for (int v : key) h = h * 0x9e3779b97f4a7c15ULL + size_t(unsigned(v));
    return h;
  }
};

// Row-major C(m,n) = op(A)·op(B) is column-major C'(n,m) = op(B)'·op(A)': libxsmm's first operand
// is B, with B's transpose flag, its second A.
libxsmm_smmfunction generate(bool trans_a, bool trans_b, int m, int n, int k, int lda, int ldb,
                             int ldc) {
  const int flags =
      (trans_b ? LIBXSMM_GEMM_FLAG_TRANS_A : 0) | (trans_a ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
  const float alpha = 1.f, beta = 0.f;
  const libxsmm_blasint M = n, N = m, K = k, ld_first = ldb, ld_second = lda, ld_out = ldc;
  return libxsmm_smmdispatch(M, N, K, &ld_first, &ld_second, &ld_out, &alpha, &beta, &flags,
                             nullptr);
}

}  // namespace

void SmallKernel::operator()(const float* A, const float* B, float* C) const {
  reinterpret_cast<libxsmm_smmfunction>(kernel_)(B, A, C);
}

SmallKernel libxsmm_kernel(bool trans_a, bool trans_b, int m, int n, int k, int lda, int ldb,
                           int ldc) {
  thread_local std::unordered_map<Key, SmallKernel, KeyHash> kernels;
  const Key key{trans_a, trans_b, m, n, k, lda, ldb, ldc};
  const auto found = kernels.find(key);
  if (found != kernels.end()) return found->second;
  SmallKernel made;
  made.kernel_ =
      reinterpret_cast<SmallKernel::Opaque>(generate(trans_a, trans_b, m, n, k, lda, ldb, ldc));
  return kernels[key] = made;
}

void transpose(const float* in, int rows, int cols, int ld_in, float* out, int ld_out) {
  // Column-major, in is (cols, rows) and out (rows, cols).
  libxsmm_otrans(out, in, sizeof(float), cols, rows, ld_in, ld_out);
}

const char* libxsmm_description() {
  static const std::string text =
      std::string("libxsmm ") + LIBXSMM_VERSION + ", code for " + libxsmm_get_target_arch();
  return text.c_str();
}

}  // namespace mf::cpu
