#include "kernels/small_gemm.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu_clones.h"

namespace mf::cpu {
namespace {

// A block of C: kRows rows by kCols columns, kept in registers over the whole sum (4 x 16 floats:
// eight AVX registers of independent sums, so the FMA units are not waiting on one).
constexpr int kRows = 4, kCols = 16;

// op(A)[i,p]: A(m,k) read along its rows, or, transposed, A(k,m) read down its columns.
template <bool kTransA>
inline float a_at(const float* A, int lda, int i, int p) {
  return kTransA ? A[int64_t(p) * lda + i] : A[int64_t(i) * lda + p];
}

// 8 floats as one value (GCC's and Clang's vector extension): an AVX register, or two SSE ones; a
// block's row is kCols / 8 of them. (Wider values, 16 floats, are split into spilled halves by the
// AVX2 clone.)
constexpr int kWidth = 8, kVectors = kCols / kWidth;
typedef float Columns __attribute__((vector_size(kWidth * sizeof(float))));
typedef float Unaligned __attribute__((vector_size(kWidth * sizeof(float)), aligned(alignof(float)), may_alias));

// One block of C at (i0, j0) from op(A) and a row panel of B: kCols columns of B's rows, `pitch`
// floats apart. A block with fewer than kRows rows reads its last row again in their place and
// stores only its own; fewer than kCols columns come from a zero-padded panel (product below). Each
// element is the same sum in the same order either way.
template <bool kTransA>
[[gnu::always_inline]] inline void block(const float* A, int lda, const float* panel, int pitch, float* C, int ldc,
                                         int k, int i0, int j0, int rows, int cols) {
  int row[kRows];
  for (int r = 0; r < kRows; ++r) row[r] = i0 + std::min(r, rows - 1);
  Columns acc[kRows][kVectors] = {};
  for (int p = 0; p < k; ++p) {
    const float* line = panel + int64_t(p) * pitch;
    Columns b[kVectors];
    for (int v = 0; v < kVectors; ++v) b[v] = *reinterpret_cast<const Unaligned*>(line + v * kWidth);
    for (int r = 0; r < kRows; ++r) {
      const float a = a_at<kTransA>(A, lda, row[r], p);
      for (int v = 0; v < kVectors; ++v) acc[r][v] += a * b[v];
    }
  }
  if (rows == kRows && cols == kCols) {
    for (int r = 0; r < kRows; ++r)
      for (int v = 0; v < kVectors; ++v)
        *reinterpret_cast<Unaligned*>(C + int64_t(i0 + r) * ldc + j0 + v * kWidth) = acc[r][v];
    return;
  }
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) C[int64_t(i0 + r) * ldc + j0 + c] = acc[r][c / kWidth][c % kWidth];
}

// C(m,n) = op(A)·B with B(k,n) row-major, a column of blocks at a time; the last column of blocks,
// when narrower than kCols, reads a zero-padded copy of its columns of B (`padded`: k * kCols
// floats). Inlined into each clone below, so that it is compiled for each CPU's width.
template <bool kTransA>
[[gnu::always_inline]] inline void product(int m, int n, int k, const float* A, int lda, const float* B, int ldb,
                                          float* C, int ldc, float* padded) {
  for (int j = 0; j < n; j += kCols) {
    const int cols = std::min(kCols, n - j);
    const float* panel = B + j;
    int pitch = ldb;
    if (cols < kCols) {
      for (int p = 0; p < k; ++p)
        for (int c = 0; c < kCols; ++c) padded[p * kCols + c] = c < cols ? B[int64_t(p) * ldb + j + c] : 0.f;
      panel = padded, pitch = kCols;
    }
    for (int i = 0; i < m; i += kRows) block<kTransA>(A, lda, panel, pitch, C, ldc, k, i, j, std::min(kRows, m - i), cols);
  }
}
// C(m,n) = rows·colsᵀ for a product narrower than a block (n < kCols: a layer of one or ten units):
// each element a dot product of a row of op(A) (`rows`, m x k) and a column of op(B) (`cols`, n x k),
// in kWidth-lane partial sums over k, two vectors of them, added up in a fixed order, then k's tail.
MF_CPU_CLONES void narrow_product(int m, int n, int k, const float* rows, const float* cols, float* C, int ldc) {
  for (int i = 0; i < m; ++i) {
    const float* a = rows + int64_t(i) * k;
    for (int j = 0; j < n; ++j) {
      const float* b = cols + int64_t(j) * k;
      Columns even = {}, odd = {};
      int p = 0;
      for (; p + 2 * kWidth <= k; p += 2 * kWidth) {
        even += *reinterpret_cast<const Unaligned*>(a + p) * *reinterpret_cast<const Unaligned*>(b + p);
        odd += *reinterpret_cast<const Unaligned*>(a + p + kWidth) * *reinterpret_cast<const Unaligned*>(b + p + kWidth);
      }
      const Columns lanes = even + odd;
      float sum = 0.f;
      for (int l = 0; l < kWidth; ++l) sum += lanes[l];
      for (; p < k; ++p) sum += a[p] * b[p];
      C[int64_t(i) * ldc + j] = sum;
    }
  }
}

// C(m,n) = A(k,m)ᵀ·B(k,n) narrower than a block (a gradient of an output layer's kernel): kWidth
// elements of a column of C at once, from kWidth neighbours of a row of A, each summed over k in
// order from 0; columns four at a time, rows past the last whole vector one by one.
MF_CPU_CLONES void narrow_product_tn(int m, int n, int k, const float* A, int lda, const float* B, int ldb, float* C,
                                     int ldc) {
  constexpr int kGroup = 4;
  int i = 0;
  for (; i + kWidth <= m; i += kWidth)
    for (int j0 = 0; j0 < n; j0 += kGroup) {
      const int group = std::min(kGroup, n - j0);
      Columns acc[kGroup] = {};
      for (int p = 0; p < k; ++p) {
        const Columns a = *reinterpret_cast<const Unaligned*>(A + int64_t(p) * lda + i);
        const float* b = B + int64_t(p) * ldb + j0;
        for (int g = 0; g < kGroup; ++g) acc[g] += a * b[std::min(g, group - 1)];
      }
      for (int g = 0; g < group; ++g)
        for (int l = 0; l < kWidth; ++l) C[int64_t(i + l) * ldc + j0 + g] = acc[g][l];
    }
  for (; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float sum = 0.f;
      for (int p = 0; p < k; ++p) sum += A[int64_t(p) * lda + i] * B[int64_t(p) * ldb + j];
      C[int64_t(i) * ldc + j] = sum;
    }
}

// dst(cols, rows) = src(rows, cols)ᵀ, src `ld` floats a row.
void transpose(const float* src, int rows, int cols, int ld, float* dst) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) dst[int64_t(c) * rows + r] = src[int64_t(r) * ld + c];
}

MF_CPU_CLONES void product_nn(int m, int n, int k, const float* A, int lda, const float* B, int ldb, float* C,
                              int ldc, float* padded) {
  product<false>(m, n, k, A, lda, B, ldb, C, ldc, padded);
}
MF_CPU_CLONES void product_tn(int m, int n, int k, const float* A, int lda, const float* B, int ldb, float* C,
                              int ldc, float* padded) {
  product<true>(m, n, k, A, lda, B, ldb, C, ldc, padded);
}

}  // namespace

// Measured on the 2-core VM (README, "The CPU backend's products"): below this many multiply-adds
// OpenBLAS's fixed cost is most of a product's time; above it, its packed kernels win.
bool is_small_product(int m, int n, int k) { return int64_t(m) * n * k <= int64_t(1) << 18; }

void small_gemm(bool trans_a, bool trans_b, int m, int n, int k, const float* A, int lda, const float* B, int ldb,
                float* C, int ldc) {
  // This thread's buffers, kept for its next product: operands copied into the layout a path reads.
  thread_local std::vector<float> a_copy, b_copy;
  const auto room = [](std::vector<float>& v, int64_t floats) {
    if (v.size() < size_t(floats)) v.resize(size_t(floats));
    return v.data();
  };
  if (n < kCols && trans_a) {  // narrow, A(k,m) read along its rows
    if (trans_b) {
      transpose(B, n, k, ldb, room(b_copy, int64_t(k) * n));
      B = b_copy.data(), ldb = n;
    }
    return narrow_product_tn(m, n, k, A, lda, B, ldb, C, ldc);
  }
  if (n < kCols) {  // narrow: rows of A against columns of op(B), both contiguous along k
    const float* rows = A;
    if (lda != k) {
      float* packed = room(a_copy, int64_t(m) * k);
      for (int i = 0; i < m; ++i) std::copy_n(A + int64_t(i) * lda, k, packed + int64_t(i) * k);
      rows = packed;
    }
    const float* cols = B;
    if (!trans_b) {
      transpose(B, k, n, ldb, room(b_copy, int64_t(n) * k));
      cols = b_copy.data();
    } else if (ldb != k) {
      float* packed = room(b_copy, int64_t(n) * k);
      for (int j = 0; j < n; ++j) std::copy_n(B + int64_t(j) * ldb, k, packed + int64_t(j) * k);
      cols = packed;
    }
    return narrow_product(m, n, k, rows, cols, C, ldc);
  }
  if (trans_b) {  // op(B) = B(n,k)ᵀ: copied to (k,n), so that the blocks read it along rows
    transpose(B, n, k, ldb, room(b_copy, int64_t(k) * n));
    B = b_copy.data(), ldb = n;
  }
  float* padded = room(a_copy, int64_t(k) * kCols);  // the last column of blocks' panel
  if (trans_a) product_tn(m, n, k, A, lda, B, ldb, C, ldc, padded);
  else product_nn(m, n, k, A, lda, B, ldb, C, ldc, padded);
}

}  // namespace mf::cpu
