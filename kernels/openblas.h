#pragma once
// OpenBLAS, the GEMM of the CPU references, loaded at the first product with one
// thread (runtime/shared_library.h).
//
// Linked normally, OpenBLAS starts a pool of (cores - 1) threads as the process
// loads, each taking a 128 MiB work buffer: 2 GiB of address space on a 16-core
// machine before main() runs, and under an address-space limit (ulimit -v) too
// low for a buffer, a thread that retries forever, so that even `--help` hangs
// at exit. Loaded here with OPENBLAS_NUM_THREADS=1, there is no pool: the one
// buffer, the caller's, is tried for first and taken at once, and a limit too low
// for it is a UserError. One thread is also what the CPU backend wants: a tiny
// model's products gain nothing from more, and results do not depend on the core
// count.
#include <cblas.h>

#include <string>

namespace mf::cpu {

// C(m,n) = op(A)·op(B), row-major, op(A) (m,k), op(B) (k,n): cblas_sgemm with alpha 1, beta 0.
// The first call loads OpenBLAS; throws UserError when it cannot be loaded or has no room for its
// buffer.
void sgemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m, int n, int k, const float* A,
           int lda, const float* B, int ldb, float* C, int ldc);

std::string openblas_library();  // the path OpenBLAS was loaded from; loads it

// Loads OpenBLAS and checks that `threads` threads calling it at once find room for their work
// buffers (each thread takes one of its own at its first product; past an address-space limit
// OpenBLAS would retry that allocation forever): a UserError naming the limit otherwise.
void require_room_for_threads(int threads);

// The MAX_THREADS OpenBLAS was built with, from openblas_get_config() ("... MAX_THREADS=64"): each
// thread that calls it at the same time takes one of its work buffers, from a table of twice that,
// and a caller past the table ends the process ("too many memory regions"). 64, Debian's, when the
// library does not say. Loads it.
int openblas_max_threads();

}  // namespace mf::cpu
