// gemm's launch plan (kernels/gemm_plan.h) for the MLPs' products at an H200's 132 SMs: the tile,
// and the split-K factor that brings a launch with few output tiles near two blocks per SM.
#include <gtest/gtest.h>

#include "kernels/gemm_plan.h"

namespace mf {
namespace {

constexpr int kH200 = 132;

int splits(int m, int k, int n, int members = 1, bool col_sums = false) {
  return gemm_plan(m, k, n, members, kH200, col_sums).splits;
}

// The plan's promises, for any shape: S is 1 or K's ranges; a range covers at least kSplitMinK of
// K; blocks x S stays within two blocks per SM, so gemm_workspace_floats holds every plan's
// partials.
void expect_sound(int m, int k, int n, int members, bool col_sums) {
  const GemmPlan plan = gemm_plan(m, k, n, members, kH200, col_sums);
  ASSERT_GE(plan.splits, 1);
  EXPECT_EQ(plan.tile, gemm_tile(m, n, members));
  if (plan.splits == 1) return;
  EXPECT_EQ(plan.splits, gemm_k_ranges(k));
  EXPECT_GE(k / plan.splits, kSplitMinK) << m << "x" << k << "x" << n;
  const int side = gemm_tile_side(plan.tile), rows = m + (col_sums ? 1 : 0);
  const int64_t blocks = int64_t((rows + side - 1) / side) * ((n + side - 1) / side) * members;
  EXPECT_LE(blocks * plan.splits, kSplitBlocksPerSm * kH200);
  EXPECT_LE(int64_t(members) * plan.splits * rows * n, gemm_workspace_floats(kH200));
}

TEST(GemmPlan, TheFashionMnistFirstLayerSplitsAtSmallBatches) {
  // Forward C(m,256) = X(m,784)·W: K in 8 ranges (784/64 = 12, capped at kMaxKRanges) of 98. Batch
  // 32 has 8 tiles of 32x32: 64 blocks; batch 128, 32 tiles: 256 blocks, within 264; batch 1024,
  // 256 tiles: already fills the GPU.
  EXPECT_EQ(gemm_k_ranges(784), 8);
  EXPECT_EQ(gemm_plan(32, 784, 256, 1, kH200).tile, GemmTile::small32);
  EXPECT_EQ(splits(32, 784, 256), 8);
  EXPECT_EQ(splits(128, 784, 256), 8);
  EXPECT_EQ(splits(1024, 784, 256), 1);
  // 784 -> 100: 4, 16 and 128 tiles (128 x 8 would pass 264).
  EXPECT_EQ(splits(32, 784, 100), 8);
  EXPECT_EQ(splits(128, 784, 100), 8);
  EXPECT_EQ(splits(1024, 784, 100), 1);
}

TEST(GemmPlan, TheOutputLayers) {
  // 256 -> 10: K/64 = 4 caps every batch; 100 -> 10: K/64 = 1, never split.
  for (int m : {32, 128, 1024}) {
    EXPECT_EQ(splits(m, 256, 10), 4) << m;
    EXPECT_EQ(splits(m, 100, 10), 1) << m;
  }
}

TEST(GemmPlan, TheTinyModelNeverSplits) {
  // 20 -> 64 -> 1: K of 20 and 64 is under two splits' worth.
  for (int m : {32, 128, 1024}) {
    EXPECT_EQ(splits(m, 20, 64), 1) << m;
    EXPECT_EQ(splits(m, 64, 1), 1) << m;
  }
}

TEST(GemmPlan, TheBackwardProducts) {
  // dX(m,k) = dZ(m,n)·Wᵀ, K = n: the first layer's fan-out 256 splits at batch 32 (C 32x784: 25
  // tiles).
  EXPECT_EQ(splits(32, 256, 784), 4);
  EXPECT_EQ(splits(1024, 256, 784), 1);
  // dW(k,n) = Xᵀ·dZ with the column sums' row, K = m: the batch. 32 rows never split; 1024 rows of
  // the output layer (C 257x10 with the sums: 9 tiles) split 8 ways, the first layer's (785x256:
  // 200 tiles) not.
  EXPECT_EQ(splits(256, 32, 10, 1, true), 1);
  EXPECT_EQ(splits(256, 1024, 10, 1, true), 8);
  EXPECT_EQ(splits(784, 1024, 256, 1, true), 1);
}

TEST(GemmPlan, APackCountsItsMembersBlocks) {
  // 3 members of the batch-32 first layer: 24 blocks, x 8 = 192; 8 members' 64 blocks x 8 would
  // pass 264. The ranges are K's alone, so a member sums as its model alone does either way.
  EXPECT_EQ(splits(32, 784, 256, 3), 8);
  EXPECT_EQ(splits(32, 784, 256, 8), 1);
}

TEST(GemmPlan, NoSmCountNoSplit) {
  EXPECT_EQ(gemm_plan(32, 784, 256, 1, 0).splits, 1);
  static_assert(gemm_plan(32, 784, 256, 1, 132).splits == 8, "the plan is a constant expression");
}

TEST(GemmPlan, EveryPlanIsSound) {
  for (int m : {1, 32, 33, 128, 1024})
    for (int k : {1, 20, 64, 100, 128, 256, 784, 1024, 5000})
      for (int n : {1, 10, 64, 100, 256, 784})
        for (int members : {1, 3, 32})
          for (bool col_sums : {false, true}) expect_sound(m, k, n, members, col_sums);
}

}  // namespace
}  // namespace mf
