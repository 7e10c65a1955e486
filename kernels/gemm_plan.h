#pragma once
// How gemm.cu launches a C(M,N) = op(A)(M,K)·op(B)(K,N) for a pack of `members`: pure functions of
// the shape and the device's SM count, so the unit tests check the plan without a GPU.
#include <algorithm>
#include <cstdint>

namespace mf {

// The tile configuration gemm.cu launches for a C(M,N): 64x64 tiles (256 threads, 4x4 each) when
// there are enough of them to fill a large GPU (132 SMs on an H200), else 32x32 tiles (256 threads,
// 2x2 each), four times as many blocks for the small products of a small model. The parity tests
// use it to prove each configuration runs.
enum class GemmTile { small32, large64 };
constexpr GemmTile gemm_tile(int M, int N, int members = 1) {
  constexpr int64_t kEnoughTiles = 128;
  return int64_t((M + 63) / 64) * ((N + 63) / 64) * members >= kEnoughTiles ? GemmTile::large64
                                                                            : GemmTile::small32;
}
constexpr int gemm_tile_side(GemmTile tile) { return tile == GemmTile::large64 ? 64 : 32; }

// Split-K: the blocks a launch aims at, per SM. Two resident blocks of 256 threads per SM hide each
// other's shared-memory loads; fewer leaves SMs idle (the batch-32 first layer of the Fashion-MNIST
// MLP has 8 output tiles for an H200's 132 SMs).
inline constexpr int kSplitBlocksPerSm = 2;
// The least K a range covers. Each split's blocks load their A and B tiles and write a partial C
// tile (read once more by the sum pass): below 64 (4 steps of the kernel's BK = 16) that extra
// traffic and the tile loads' latency outweigh the parallelism won.
inline constexpr int kSplitMinK = 64;
// The most ranges K is cut into: 8 lets the batch-128 first layer (32 tiles) split and keep its
// 256 blocks within 2 x 132; more would only serve the smallest products, at more partial traffic.
inline constexpr int kMaxKRanges = 8;
// Host execution plays an H200's SM count, so that its tests split the products an H200 would.
inline constexpr int kHostExecSms = 132;

// gemm sums every product over R = gemm_k_ranges(K) contiguous ranges of K, [r·K/R, (r+1)·K/R)
// (each at least kSplitMinK long), each range's sum from zero, the ranges' sums then added in the
// order r = 0..R-1: one block per tile folding them in registers, or (split) R blocks per tile
// writing them out and a second pass adding them. The order depends on K alone, so a split product
// equals the unsplit one bit for bit, and a pack member (whose blocks the plan counts) equals its
// model trained alone.
constexpr int gemm_k_ranges(int K) { return std::max(1, std::min(kMaxKRanges, K / kSplitMinK)); }

struct GemmPlan {
  GemmTile tile = GemmTile::small32;
  int splits = 1;  // S: 1, or gemm_k_ranges(K) blocks per output tile, one range each
};

// The launch plan: the tile as gemm_tile; then split (S = gemm_k_ranges(K) > 1) where the blocks
// (output tiles of C's rows, with the column sums' extra row when col_sums, times the members)
// times S stay within kSplitBlocksPerSm x sms: the launches whose tiles are too few to fill the
// GPU. S = 1 otherwise, or with no SM count (sms <= 0).
constexpr GemmPlan gemm_plan(int M, int K, int N, int members, int sms, bool col_sums = false) {
  const GemmTile tile = gemm_tile(M, N, members);
  const int64_t side = gemm_tile_side(tile), rows = M + (col_sums ? 1 : 0);
  const int64_t blocks = ((rows + side - 1) / side) * ((N + side - 1) / side) * members;
  const int ranges = gemm_k_ranges(K);
  if (sms <= 0 || ranges == 1 || blocks * ranges > int64_t(kSplitBlocksPerSm) * sms)
    return {tile, 1};
  return {tile, ranges};
}

// The floats of split-K workspace that any plan for `sms` SMs needs at most: blocks x S never
// passes kSplitBlocksPerSm x sms, and each block's partial is at most a 64x64 tile.
constexpr int64_t gemm_workspace_floats(int sms) {
  return int64_t(kSplitBlocksPerSm) * sms * 64 * 64;
}

}  // namespace mf
