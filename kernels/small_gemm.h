#pragma once
// Products of small matrices without a library call's fixed cost. A tiny model's products (the
// seeds' 20 -> 64 -> 1 at batch 64: at most 64 x 64 x 20) take OpenBLAS about as long in its
// set-up (packing both operands, zeroing C row by row for beta = 0, its dispatch) as in its kernel;
// these loops run the product in registers at once: blocks of 4 x 16 elements of C summed over k in
// order from 0, or, for a product narrower than 16 columns (an output layer), dot products in
// 16 lanes added up in a fixed order. Which, and each sum's order, depend on the shape alone, never on
// where in C an element falls or on timing; compiled for AVX-512, for AVX2 with FMA and for the
// baseline, chosen at load time (kernels/cpu_clones.h): on one machine the same inputs always give
// the same bits.
namespace mf::cpu {

// Whether small_gemm is the faster path for C(m,n) = op(A)·op(B) with inner dimension k
// (measured against OpenBLAS: README, "The CPU backend's products").
bool is_small_product(int m, int n, int k);

// C(m,n) = op(A)·op(B), row-major, op(A) (m,k), op(B) (k,n): what sgemm (kernels/openblas.h) computes,
// with the same arguments. An operand in the other layout than its path reads is copied first, into
// a buffer of this thread's that is kept for its next product (at most k * max(m, n, 16) floats).
void small_gemm(bool trans_a, bool trans_b, int m, int n, int k, const float* A, int lda, const float* B, int ldb,
                float* C, int ldc);

}  // namespace mf::cpu
