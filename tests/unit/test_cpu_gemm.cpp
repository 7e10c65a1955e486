// The cpu backend's products (kernels/cpu_gemm.h): libxsmm's kernels on the shapes it takes,
// OpenBLAS's on the rest, each against a product summed in double, with the strides of a column
// part (rows of C wider than the part) and of a transposed operand.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/cpu_gemm.h"
#include "kernels/libxsmm.h"
#include "runtime/rng.h"

namespace mf {
namespace {

struct Case {
  bool trans_a, trans_b;
  int m, n, k;
  int pad;  // extra floats at the end of every row of A, B and C
};

// C(m,n) = op(A)·op(B) in double, row-major with the same strides.
std::vector<double> reference(const Case& c, const std::vector<float>& A, int lda,
                              const std::vector<float>& B, int ldb, int ldc) {
  std::vector<double> C(size_t(c.m) * ldc, 0.0);
  for (int i = 0; i < c.m; ++i)
    for (int j = 0; j < c.n; ++j) {
      double sum = 0;
      for (int p = 0; p < c.k; ++p) {
        const float a = c.trans_a ? A[size_t(p) * lda + i] : A[size_t(i) * lda + p];
        const float b = c.trans_b ? B[size_t(j) * ldb + p] : B[size_t(p) * ldb + j];
        sum += double(a) * b;
      }
      C[size_t(i) * ldc + j] = sum;
    }
  return C;
}

void expect_product_right(const Case& c) {
  const int lda = (c.trans_a ? c.m : c.k) + c.pad, ldb = (c.trans_b ? c.k : c.n) + c.pad,
            ldc = c.n + c.pad;
  Rng rng(uint64_t(c.m) * 131 + c.n * 7 + c.k);
  std::vector<float> A(size_t(c.trans_a ? c.k : c.m) * lda), B(size_t(c.trans_b ? c.n : c.k) * ldb);
  for (float& x : A) x = rng.uniform(-1.f, 1.f);
  for (float& x : B) x = rng.uniform(-1.f, 1.f);
  const float kUntouched = 12345.f;  // the padding of C's rows must stay as it was
  std::vector<float> C(size_t(c.m) * ldc, kUntouched);
  cpu::product(c.trans_a, c.trans_b, c.m, c.n, c.k, A.data(), lda, B.data(), ldb, C.data(), ldc);
  const std::vector<double> want = reference(c, A, lda, B, ldb, ldc);
  for (int i = 0; i < c.m; ++i) {
    for (int j = 0; j < c.n; ++j) {
      const double w = want[size_t(i) * ldc + j];
      // float32 products of k terms of magnitude below 1: a few ulps of sqrt(k) each
      ASSERT_NEAR(C[size_t(i) * ldc + j], w, 1e-5 * std::sqrt(double(c.k)) + 1e-6 * std::fabs(w))
          << "C(" << i << "," << j << ")";
    }
    for (int j = c.n; j < ldc; ++j)
      ASSERT_EQ(C[size_t(i) * ldc + j], kUntouched) << "padding of row " << i;
  }
}

TEST(CpuGemm, EveryTransposeAndStrideOnBothPathsEqualsTheProductInDouble) {
  const Case cases[] = {
      // libxsmm's: the Fashion-MNIST MLP's products at batch 32 (forward, weight gradient)
      {false, false, 32, 256, 784, 0},
      {true, false, 784, 256, 32, 0},
      {false, false, 32, 10, 128, 0},
      {false, false, 32, 128, 784, 128},  // a column part: half of a 256-wide output
      {true, false, 256, 128, 32, 3},
      // libxsmm's through a transposed copy of op(B): the input gradient's products
      {false, true, 32, 256, 128, 0},
      {false, true, 32, 128, 256, 5},
      // OpenBLAS's: few columns, few multiply-adds
      {false, true, 32, 8, 1024, 0},
      {false, false, 128, 1, 784, 0},
      {true, false, 784, 8, 32, 0},
      {false, false, 64, 64, 20, 0},
      {true, false, 20, 64, 64, 1},
      {false, false, 1, 1, 1, 0}};
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message()
                 << (c.trans_a ? "T" : "N") << (c.trans_b ? "T" : "N") << " m " << c.m << " n "
                 << c.n << " k " << c.k << " pad " << c.pad
                 << (cpu::takes_libxsmm(c.trans_a, c.trans_b, c.m, c.n, c.k) ? " (libxsmm)"
                                                                             : " (OpenBLAS)"));
    expect_product_right(c);
  }
}

TEST(CpuGemm, TheMlpsProductsTakeLibxsmmAndItHasKernelsForThemHere) {
  // Where libxsmm generates no code for this CPU the products fall back to OpenBLAS, correctly but
  // without the path this suite means to cover: say so rather than pass on the fallback alone.
  if (!cpu::libxsmm_kernel(false, false, 32, 256, 784, 784, 256, 256))
    GTEST_SKIP() << "libxsmm generates no kernels on this CPU (" << cpu::libxsmm_description()
                 << ")";
  EXPECT_TRUE(cpu::takes_libxsmm(false, false, 32, 256, 784));
  EXPECT_TRUE(cpu::takes_libxsmm(true, false, 784, 256, 32));
  EXPECT_TRUE(cpu::libxsmm_kernel(true, false, 784, 256, 32, 784, 256, 256));
  // dense_backward_input's product (op(B) transposed) has no libxsmm kernel of its own: it takes
  // the plain product's, on a transposed copy of op(B)
  EXPECT_TRUE(cpu::takes_libxsmm(false, true, 32, 256, 128));
  EXPECT_FALSE(cpu::libxsmm_kernel(false, true, 32, 256, 128, 128, 128, 256));
  EXPECT_TRUE(cpu::libxsmm_kernel(false, false, 32, 256, 128, 128, 256, 256));
  // the seeds' tiny model stays on OpenBLAS's small-matrix kernels (and never starts libxsmm)
  EXPECT_FALSE(cpu::takes_libxsmm(false, false, 64, 64, 20));
  EXPECT_FALSE(cpu::takes_libxsmm(true, false, 20, 64, 64));
  EXPECT_FALSE(cpu::takes_libxsmm(false, false, 64, 1, 64));
  EXPECT_FALSE(cpu::takes_libxsmm(true, false, 64, 1, 64));
}

}  // namespace
}  // namespace mf
