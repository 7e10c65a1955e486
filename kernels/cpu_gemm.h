#pragma once
// The CPU backend's products: which library computes which shape.
//
// libxsmm's JIT kernels for products of at least 2^17 multiply-adds whose output has at least 10
// columns; OpenBLAS for the rest. Measured on the 2-core VM (Intel Xeon with AVX-512, OpenBLAS
// 0.3.21, libxsmm 1.17; `cpu_gemm_bench`, recorded in benchmarks/results/2026-12-01-cpu-libxsmm/):
//   - libxsmm computes the Fashion-MNIST MLP's forward and weight-gradient products 1.1-1.6x faster
//     at batches 32 and 128: OpenBLAS copies both operands into packed panels at every call, which
//     costs as much as a product this size;
//   - with fewer than 10 output columns libxsmm, which vectorizes along them, runs at a quarter to
//     nine tenths of OpenBLAS's speed (a one-unit layer: a quarter);
//   - below 2^17 multiply-adds it gains at most 0.1 µs a product (the seeds' tiny model's hidden
//     layer), while libxsmm's first kernel in a process costs its start, about 2 ms and 8 MiB of
//     locked memory (its registry of kernels): for a processes-mode sweep of tiny models, a
//     worker's whole training. So the tiny models never start it;
//   - libxsmm 1.17 makes no kernel with op(B) transposed (the input gradient's product), so such a
//     product transposes op(B) first (libxsmm's transposition, into a buffer of the thread's) and
//     takes the kernel for the plain one. On one thread that is 1.35-1.6x OpenBLAS's time, but
//     OpenBLAS past its small-matrix kernels takes concurrent callers one at a time: two threads
//     each running 784-100 input-gradient products at once finished a pair in 2.4x one product's
//     time, against 1.03x this way (2026-12-06 on an AMD EPYC VM; benchmarks/results/
//     2026-12-06-cpu-threads/concurrent_products.txt), and the cpu backend's team, packs and
//     streams all call it from several threads.
//
// The choice depends on the shape alone, so a product gives the same bits run after run, and a pack
// member's, with its model's shapes, those of the model alone. The two libraries round differently
// (to float32 rounding), so a model whose products change path (a wider layer, another batch size)
// differs from a run before this choice in the last bits.

namespace mf::cpu {

// Whether the product below takes libxsmm's path (its kernel may still be missing: then
// OpenBLAS's).
bool takes_libxsmm(bool trans_a, bool trans_b, int m, int n, int k);

// C(m,n) = op(A)(m,k)·op(B)(k,n), row-major, rows lda, ldb, ldc floats apart, alpha 1, beta 0.
// Throws UserError when OpenBLAS, needed for the shape, cannot be loaded (kernels/openblas.h).
void product(bool trans_a, bool trans_b, int m, int n, int k, const float* A, int lda,
             const float* B, int ldb, float* C, int ldc);

}  // namespace mf::cpu
