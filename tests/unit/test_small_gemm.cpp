// kernels/small_gemm.h against OpenBLAS (kernels/openblas.h) on every form a dense layer uses (op(A)
// and op(B) each plain or transposed), on shapes that fill the 4 x 16 blocks, leave edges in both
// directions, are narrower than a block (an output layer of 1 or 10 units) and have leading
// dimensions wider than the matrix; and the same inputs give the same bits again, wherever in a
// larger C the product is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/openblas.h"
#include "kernels/small_gemm.h"

namespace mf::cpu {
namespace {

std::vector<float> values(size_t n, unsigned seed) {
  std::vector<float> v(n);
  uint32_t x = 2463534242u ^ (seed * 2654435761u);
  for (float& f : v) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    f = -1.f + 2.f * float(x >> 8) / float(1 << 24);
  }
  return v;
}

struct Shape {
  int m, n, k;
};

// Every element against OpenBLAS: sums of k terms in [-1, 1] in another order differ by about an ulp
// a term.
void expect_matches_openblas(bool ta, bool tb, Shape s, int pad) {
  SCOPED_TRACE(std::string(ta ? "T" : "N") + (tb ? "T" : "N") + " m " + std::to_string(s.m) + " n " +
               std::to_string(s.n) + " k " + std::to_string(s.k) + " pad " + std::to_string(pad));
  const int lda = (ta ? s.m : s.k) + pad, ldb = (tb ? s.k : s.n) + pad, ldc = s.n + pad;
  const std::vector<float> A = values(size_t((ta ? s.k : s.m) * lda), 1), B = values(size_t((tb ? s.n : s.k) * ldb), 2);
  std::vector<float> want(size_t(s.m * ldc), 0.f), got(size_t(s.m * ldc), 7.f);
  sgemm(ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, s.m, s.n, s.k, A.data(), lda, B.data(), ldb,
        want.data(), ldc);
  small_gemm(ta, tb, s.m, s.n, s.k, A.data(), lda, B.data(), ldb, got.data(), ldc);
  const float tolerance = std::max(1e-5f, 2.4e-7f * float(s.k));
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j)
      ASSERT_NEAR(got[size_t(i * ldc + j)], want[size_t(i * ldc + j)], tolerance) << "C[" << i << "," << j << "]";
    for (int j = s.n; j < ldc; ++j) ASSERT_EQ(got[size_t(i * ldc + j)], 7.f) << "written past column " << s.n;
  }
}

const Shape kShapes[] = {
    {64, 64, 20},  // the seeds' first layer, forward: whole blocks
    {20, 64, 64},  // its kernel's gradient (k = the batch)
    {64, 1, 64},   // the output layer of one unit: narrow
    {64, 64, 1},   // the output layer's input gradient: k = 1
    {32, 10, 128}, // Fashion-MNIST's output layer: narrow, ten columns
    {23, 37, 19},  // edges in both directions, a k tail
    {5, 17, 3},    {1, 1, 1}, {7, 15, 33}, {9, 100, 24},
};

TEST(SmallGemm, EveryFormMatchesOpenBlas) {
  for (const Shape& s : kShapes)
    for (const bool ta : {false, true})
      for (const bool tb : {false, true})
        for (const int pad : {0, 3}) expect_matches_openblas(ta, tb, s, pad);
}

// The same product written into the corner of a C and into its middle, and run twice: the same bits.
TEST(SmallGemm, AProductsBitsDependOnItsInputsOnly) {
  for (const Shape& s : kShapes)
    for (const bool ta : {false, true}) {
      const int lda = ta ? s.m : s.k, ldc = s.n + 8;
      const std::vector<float> A = values(size_t((ta ? s.k : s.m) * lda), 3), B = values(size_t(s.k * s.n), 4);
      std::vector<float> first(size_t((s.m + 2) * ldc)), second(first.size());
      small_gemm(ta, false, s.m, s.n, s.k, A.data(), lda, B.data(), s.n, first.data(), ldc);
      small_gemm(ta, false, s.m, s.n, s.k, A.data(), lda, B.data(), s.n, second.data() + 2 * ldc + 5, ldc);
      for (int i = 0; i < s.m; ++i)
        EXPECT_EQ(std::memcmp(&first[size_t(i * ldc)], &second[size_t((i + 2) * ldc + 5)], size_t(s.n) * sizeof(float)),
                  0)
            << (ta ? "T" : "N") << " m " << s.m << " n " << s.n << " k " << s.k << ": row " << i;
    }
}

}  // namespace
}  // namespace mf::cpu
