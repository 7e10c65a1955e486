// Tiled GEMM for the three products of a dense layer. Must equal: dense_cpu.cpp (OpenBLAS).
// Checked by: tests/parity/test_kernel_parity.cpp (DenseParity.*, every tile configuration:
// KernelParityShapes).
//   forward   Y(m,n) = act(X(m,k)·W(k,n) + b)  A = X, B = W; with rows, X's rows are read from the
//                                              data set by index (from the step state's first_row
//                                              on), so the batch needs no gather
//   backward dX(m,k) = dZ(m,n)·Wᵀ ⊙ act'(Y)     A = dZ, B = W stored (N,K): trans_b; through = the
//                                              layer below's activation and output, so its
//                                              activation's backward costs no launch of its own
//   backward dW(k,n) = Xᵀ·dZ(m,n)               A = X stored (K,M): trans_a, B = dZ; rows as
//                                              forward's
//             db(n)  = 1ᵀ·dZ(m,n)               col_sums: one more row of C, its row of op(A) all
//                                              ones: the bias gradient costs no launch of its own
//
// A pack's products run in one launch, member z's on grid.z, each on its own operands.
// Each block computes a BM x BN tile of C; each thread a TM x TN sub-tile held
// in registers, with its rows and columns strided by the thread grid so that
// shared-memory reads are broadcasts or consecutive words. Tiles are stored
// k-major (As[k][row]); a padding of 2 words makes the transposing stores of
// a (row, k) walk hit 32 distinct banks. Edges are handled by zero-filling
// the tiles and guarding the stores, so any shape works.
//
// Every product sums K in R = gemm_k_ranges(K) contiguous ranges (kernels/gemm_plan.h), each from
// zero, the ranges' sums added in the order r = 0..R-1. Unsplit, a block folds them in registers.
// Split-K, when C has too few tiles to fill the GPU: grid.z holds members x R blocks per output
// tile, range r of member z at blockIdx.z = z·R + r; they store their raw range sums (the column
// sums' row too) in the workspace, laid out [member][range][row of C, the column sums' row
// last][column], and gemm_split_sum adds a member's R of them in the same order and applies the
// same epilogue: the same additions in the same order, so split and unsplit results are equal bit
// for bit.
#include <stdexcept>
#include <string>

#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

// Where A's stored row i is: i, or rows[i] for a batch gathered by index.
__device__ __forceinline__ int stored_row(const GemmFused& fused, int i) {
  return fused.rows ? fused.rows[i] : i;
}

// The fused work on C(r,c)'s product v: bias, activation and the pre-activation kept (a forward),
// or the gradient through the layer below's activation (a backward).
__device__ __forceinline__ float epilogue(const GemmFused& fused, float v, int r, int c, int N) {
  const int64_t at = int64_t(r) * N + c;
  if (fused.through.any()) return fused.through.apply(v, at);
  if (fused.bias) v += fused.bias[c];
  if (fused.pre_activation) fused.pre_activation[at] = v;
  return activate(fused.act, v);
}

// Whether member z has stopped: its products are left as they are (kernels/pack.h's StepState).
__device__ __forceinline__ bool member_stopped(const GemmStrides& pack, int z) {
  return pack.step && member(pack.step, z, pack.c)->stopped != 0;
}

// Member z's copies of the fused work's pointers (rows from the training step's first row on).
__device__ __forceinline__ void member_fused(GemmFused& fused, const GemmStrides& pack, int z) {
  if (fused.rows)
    fused.rows = member(fused.rows, z, pack.rows) +
                 (pack.step ? member(pack.step, z, pack.c)->first_row : 0);
  fused.bias = member(fused.bias, z, pack.b);
  fused.pre_activation = member(fused.pre_activation, z, pack.c);
  fused.through = member_through(fused.through, z, pack.c);
  fused.col_sums = member(fused.col_sums, z, pack.c);
}

template <int BM, int BN, int BK, int TM, int TN, bool TRANS_A, bool TRANS_B>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    gemm_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
               int M, int K, int N, GemmFused fused, GemmStrides pack, int ranges,
               float* __restrict__ work) {
  constexpr int TX = BN / TN, TY = BM / TM, THREADS = TX * TY;
  __shared__ float As[BK][BM + 2];
  __shared__ float Bs[BK][BN + 2];
  // The pack member, and with a workspace (split) the K range of this block; else all of them.
  const int splits = work ? ranges : 1, z = int(blockIdx.z) / splits,
            split = int(blockIdx.z) % splits;
  if (member_stopped(pack, z)) return;  // the whole block: its member's
  A = member(A, z, pack.a), B = member(B, z, pack.b), C = member(C, z, pack.c);
  member_fused(fused, pack, z);
  const int tid = int(threadIdx.x), tx = tid % TX, ty = tid / TX;
  // Row tiles on grid.x, which has no 65535 limit: M is the batch or a layer's fan-in.
  const int row0 = int(blockIdx.x) * BM, col0 = int(blockIdx.y) * BN;
  float sum[TM][TN] = {};  // the ranges' sums, added in order (gemm_plan.h: gemm_k_ranges)

  const int first = work ? split : 0, last = work ? split + 1 : ranges;
  for (int range = first; range < last; ++range) {
    // Range r covers [r·K/R, (r+1)·K/R): contiguous, lengths differ by at most one.
    const int k_begin = int(int64_t(range) * K / ranges),
              k_end = int(int64_t(range + 1) * K / ranges);
    float acc[TM][TN] = {};
    for (int k0 = k_begin; k0 < k_end; k0 += BK) {
      // Consecutive threads read consecutive addresses of the stored layout.
      for (int l = tid; l < BM * BK; l += THREADS) {
        const int r = TRANS_A ? l % BM : l / BK, kk = TRANS_A ? l / BM : l % BK;
        const int gr = row0 + r, gk = k0 + kk;
        float v = 0.f;
        if (gr < M && gk < k_end)
          v = TRANS_A ? A[int64_t(stored_row(fused, gk)) * M + gr]
                      : A[int64_t(stored_row(fused, gr)) * K + gk];
        // the row of ones: its row of C is 1ᵀ·op(B)
        else if (fused.col_sums && gr == M && gk < k_end)
          v = 1.f;
        As[kk][r] = v;
      }
      for (int l = tid; l < BN * BK; l += THREADS) {
        const int c = TRANS_B ? l / BK : l % BN, kk = TRANS_B ? l % BK : l / BN;
        const int gc = col0 + c, gk = k0 + kk;
        float v = 0.f;
        if (gc < N && gk < k_end) v = TRANS_B ? B[int64_t(gc) * K + gk] : B[int64_t(gk) * N + gc];
        Bs[kk][c] = v;
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        float a[TM], b[TN];
#pragma unroll
        for (int i = 0; i < TM; ++i) a[i] = As[kk][ty + i * TY];
#pragma unroll
        for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tx + j * TX];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
      }
      __syncthreads();  // the tiles are overwritten next iteration
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) sum[i][j] = range == first ? acc[i][j] : sum[i][j] + acc[i][j];
  }

  if (work) {  // split-K: the raw partial, C's rows and the column sums' row alike
    const int c_rows = M + (fused.col_sums ? 1 : 0);
    float* partial = work + (int64_t(z) * splits + split) * c_rows * N;
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        const int r = row0 + ty + i * TY, c = col0 + tx + j * TX;
        if (r < c_rows && c < N) partial[int64_t(r) * N + c] = sum[i][j];
      }
    return;
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int r = row0 + ty + i * TY, c = col0 + tx + j * TX;
      if (r < M && c < N) {
        C[int64_t(r) * N + c] = epilogue(fused, sum[i][j], r, c, N);
      } else if (fused.col_sums && r == M && c < N) {
        fused.col_sums[c] = sum[i][j];
      }
    }
}

// Split-K's second pass: one thread per element of member blockIdx.y's C (and column sums), adding
// its S partials in the order s = 0..S-1, then the unsplit path's epilogue.
__global__ void gemm_split_sum(const float* __restrict__ work, float* __restrict__ C, int M, int N,
                               int splits, GemmFused fused, GemmStrides pack) {
  const int z = int(blockIdx.y);
  if (member_stopped(pack, z)) return;
  const int c_rows = M + (fused.col_sums ? 1 : 0);
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x, size = int64_t(c_rows) * N;
  if (i >= size) return;
  C = member(C, z, pack.c);
  member_fused(fused, pack, z);
  const float* partial = work + int64_t(z) * splits * size + i;
  float v = partial[0];
  for (int s = 1; s < splits; ++s) v += partial[int64_t(s) * size];
  const int r = int(i / N), c = int(i % N);
  if (r < M)
    C[i] = epilogue(fused, v, r, c, N);
  else
    fused.col_sums[c] = v;
}

template <int BM, int BN, int TM, int TN, bool TRANS_A, bool TRANS_B>
void launch_tiled(const float* A, const float* B, float* C, int M, int K, int N,
                  const GemmFused& fused, const GemmStrides& pack, cudaStream_t stream, int splits,
                  float* work) {
  const int ranges = gemm_k_ranges(K);  // splits is 1 or ranges
  constexpr int BK = 16;
  const int c_rows = M + (fused.col_sums ? 1 : 0);  // the column sums are one more row
  const dim3 grid((c_rows + BM - 1) / BM, (N + BN - 1) / BN,
                  unsigned(pack.count) * unsigned(splits)),
      block((BM / TM) * (BN / TN));
  launch{gemm_tiled<BM, BN, BK, TM, TN, TRANS_A, TRANS_B>, grid, block, stream}(
      A, B, C, M, K, N, fused, pack, ranges, work);
  if (work) {
    constexpr int kThreads = 256;
    const dim3 sum_grid(blocks_for(int64_t(c_rows) * N, kThreads).x, unsigned(pack.count));
    launch{gemm_split_sum, sum_grid, dim3(kThreads), stream}(work, C, M, N, splits, fused, pack);
  }
}

template <bool TRANS_A, bool TRANS_B>
void dispatch(const float* A, const float* B, float* C, int M, int K, int N, const GemmFused& fused,
              const GemmStrides& pack, cudaStream_t stream, const GemmWorkspace& ws) {
  GemmPlan plan{gemm_tile(M, N, pack.count), 1};
  if (ws.data) plan = gemm_plan(M, K, N, pack.count, ws.sms, fused.col_sums != nullptr);
  float* work = nullptr;
  if (plan.splits > 1) {
    const int64_t need = int64_t(pack.count) * plan.splits * (M + (fused.col_sums ? 1 : 0)) * N;
    if (need > ws.floats)
      throw std::invalid_argument("gemm: the split-K workspace holds " + std::to_string(ws.floats) +
                                  " floats, the plan needs " + std::to_string(need));
    work = ws.data;
  }
  if (plan.tile == GemmTile::large64)
    launch_tiled<64, 64, 4, 4, TRANS_A, TRANS_B>(A, B, C, M, K, N, fused, pack, stream, plan.splits,
                                                 work);
  else
    launch_tiled<32, 32, 2, 2, TRANS_A, TRANS_B>(A, B, C, M, K, N, fused, pack, stream, plan.splits,
                                                 work);
}

}  // namespace

void gemm(const float* A, const float* B, float* C, int M, int K, int N, bool trans_a, bool trans_b,
          const GemmFused& fused, const GemmStrides& pack, cudaStream_t stream,
          const GemmWorkspace& work) {
  // The three products of a dense layer; no product transposes both operands.
  if (trans_a && trans_b)
    throw std::invalid_argument(
        "gemm: op(A) and op(B) both transposed is not a dense-layer product");
  if (trans_a)
    dispatch<true, false>(A, B, C, M, K, N, fused, pack, stream, work);
  else if (trans_b)
    dispatch<false, true>(A, B, C, M, K, N, fused, pack, stream, work);
  else
    dispatch<false, false>(A, B, C, M, K, N, fused, pack, stream, work);
}

}  // namespace mf::MF_TARGET
