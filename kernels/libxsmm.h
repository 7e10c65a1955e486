#pragma once
// libxsmm's JIT-generated kernels for small products (libxsmm 1.17, linked statically), the CPU
// backend's path for the mid-sized products of small networks, where OpenBLAS's packing of each
// operand costs more than the product (kernels/cpu_gemm.h says which shapes take it).

namespace mf::cpu {

// One generated product, C = op(A)·op(B) with alpha 1 and beta 0, for the shape and strides it was
// made for; false where libxsmm made none.
class SmallKernel {
 public:
  explicit operator bool() const { return kernel_ != nullptr; }
  void operator()(const float* A, const float* B, float* C) const;

 private:
  friend SmallKernel libxsmm_kernel(bool, bool, int, int, int, int, int, int);
  using Opaque = void (*)();  // libxsmm_smmfunction, kept out of this header
  Opaque kernel_ = nullptr;
};

// The kernel for row-major C(m,n) = op(A)(m,k)·op(B)(k,n), rows lda, ldb, ldc floats apart, or
// an empty one where libxsmm has none: op(B) transposed (libxsmm 1.17 generates no kernel with its
// first, column-major operand transposed), or a CPU it generates no code for. Generated at the
// first call for a shape and cached per thread (a lookup afterwards, not libxsmm's dispatch, which
// costs about 0.2 µs); safe from any number of threads.
SmallKernel libxsmm_kernel(bool trans_a, bool trans_b, int m, int n, int k, int lda, int ldb,
                           int ldc);

// out(cols, rows) = in(rows, cols)', row-major, rows ld_in and ld_out floats apart: libxsmm's
// transposition.
void transpose(const float* in, int rows, int cols, int ld_in, float* out, int ld_out);

// "libxsmm 1.17.0, code for avx512_core" (libxsmm's name for the instruction set it generates for).
const char* libxsmm_description();

}  // namespace mf::cpu
