// Golden values: numbers recorded once from the code and written here as literals, so that a change
// that moves them (the shuffle's hash, the initialisation, the synthetic data, the arithmetic of a
// training step) fails a test instead of passing every test that compares the code with itself.
//
// Recorded from commit 9359d25 (CPU backend, OpenBLAS, on an AVX-512 Xeon). A change here changes
// every result a user has recorded (every shuffled epoch, every loss): if it is meant, say so in
// the commit and record the new values.
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.h"
#include "data/dataset.h"
#include "nn/fit.h"
#include "test_support.h"

namespace mf {
namespace {

std::vector<int> order_of(uint32_t n, uint64_t seed, uint32_t epoch) {
  std::vector<int> order;
  for (uint32_t i = 0; i < n; ++i) order.push_back(int(permute_index(i, n, seed, epoch)));
  return order;
}

// The epoch permutation (kernels/element_math.h: mix32, permute_index), which every backend shares.
// 10 rows: a domain of 16 with cycle walking; 16 rows: the domain exactly, and a seed with high
// bits (seed >> 32 enters the key); 7 rows, seed 0, epoch 0: the smallest of everything.
TEST(Golden, ShufflePermutation) {
  EXPECT_EQ(order_of(10, 1234, 0), (std::vector<int>{9, 8, 3, 2, 4, 0, 6, 7, 5, 1}));
  EXPECT_EQ(order_of(10, 1234, 1), (std::vector<int>{8, 0, 7, 5, 6, 1, 9, 4, 3, 2}));
  EXPECT_EQ(order_of(16, 0x0123456789abcdefull, 2),
            (std::vector<int>{0, 12, 3, 2, 7, 9, 13, 6, 1, 4, 10, 11, 5, 8, 15, 14}));
  EXPECT_EQ(order_of(7, 0, 0), (std::vector<int>{0, 6, 1, 5, 4, 2, 3}));
}

// The CPU backend's shuffle, which fit uses, gives the same literal order.
TEST(Golden, CpuShuffleGivesTheGoldenPermutation) {
  CpuBackend cpu;
  std::vector<int> order(10, -1);
  MemberSettings settings;
  settings.seed = 1234;
  cpu.shuffle(order.data(), 10, &settings, 1);
  EXPECT_EQ(order, (std::vector<int>{8, 0, 7, 5, 6, 1, 9, 4, 3, 2}));
}

// Two epochs of a 6-8-3 classifier (relu, softmax; Adam's defaults) on 70 synthetic rows at batch
// 32, shuffled: the synthetic teacher's data, the initialisation from the seed, two shuffles, six
// Adam steps (two of them on a partial batch of 6 rows) and the epoch losses.
//
// Tolerance: OpenBLAS picks its kernels by processor, and another summation order rounds the
// products differently (docs/USAGE.md: "on another processor OpenBLAS may choose other kernels"),
// so the losses are compared to about 8 ulp of float (1e-6 relative, over six steps); any change of
// data, order, initialisation or update moves them by far more (another hash constant in mix32
// moves the first loss by 3e-5 and the second by 3e-4, relative). The accuracy is a count of rows
// (25 of 70): exact.
TEST(Golden, TwoEpochLossOnTheCpu) {
  const DataSplit split = make_synthetic("teacher:rows=70,features=6,classes=3,seed=9");
  ModelSpec spec = test::mlp(6, {{8, Activation::relu}, {3, Activation::softmax}},
                             Loss::sparse_categorical_crossentropy, "golden");
  spec.fit.batch_size = 32;
  spec.fit.epochs = 2;
  spec.seed = 5;
  CpuBackend cpu;
  DeviceData data(cpu, split.train);
  Model model(spec, cpu);
  const FitResult result = fit(model, data, {});
  ASSERT_EQ(result.status, FitStatus::ok) << result.why;
  ASSERT_EQ(result.epochs.size(), 2u);
  const double golden_loss[] = {1.2606967951570238, 1.2511098521096367};
  for (size_t e = 0; e < 2; ++e) {
    SCOPED_TRACE("epoch " + std::to_string(e + 1));
    EXPECT_NEAR(result.epochs[e].loss, golden_loss[e], 1e-6 * golden_loss[e]);
    EXPECT_EQ(result.epochs[e].accuracy, 25.0 / 70.0);
  }
  EXPECT_EQ(result.samples, 140);
}

}  // namespace
}  // namespace mf
