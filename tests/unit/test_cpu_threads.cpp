// The cpu backend on several threads (backends/cpu/cpu_backend.h): a model alone has its larger
// operations split into a part per thread. The split is fixed by the thread count, so a run on N
// threads gives the numbers of every other run on N threads; element-wise passes give those of one
// thread exactly, and products those of one thread to float32 rounding.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/cpu_threads.h"
#include "data/dataset.h"
#include "nn/fit.h"
#include "nn/settings.h"
#include "runtime/rng.h"
#include "tests/training_specs.h"

namespace mf {
namespace {

std::vector<float> random_floats(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform(-1.f, 1.f);
  return v;
}

TEST(CpuThreads, PiecesCoverTheRangeOnceInGrainsWhateverTheCount) {
  for (int64_t n : {0, 1, 63, 64, 65, 1000, 100003})
    for (int count : {1, 2, 3, 7})
      for (int64_t grain : {1, 16, 64}) {
        int64_t next = 0;
        for (int i = 0; i < count; ++i) {
          const cpu::Range r = cpu::piece(n, {i, count}, grain);
          EXPECT_EQ(r.begin, next) << n << " in " << count << " by " << grain;
          EXPECT_LE(r.begin, r.end);
          if (r.end < n) {
            EXPECT_EQ(r.end % grain, 0) << "a piece before the last ends between grains";
          }
          next = r.end;
        }
        EXPECT_EQ(next, n);
      }
}

TEST(CpuThreads, EveryPartRunsOnceOnATeamOfAnySize) {
  for (int threads : {1, 2, 5}) {
    std::vector<int> runs(7, 0);
    cpu::on_threads(threads, [&](int thread, int team) {
      cpu::each_part(thread, team, 7, [&](cpu::Part part) { ++runs[size_t(part.index)]; });
    });
    EXPECT_EQ(runs, std::vector<int>(7, 1)) << threads << " threads";
  }
}

// Adam over 3 * 2^15 + 5 floats in one tensor: split into parts on 2 and 3 threads, the same bits
// as on one.
TEST(CpuThreads, AdamSplitOverThreadsGivesTheBitsOfOneThread) {
  const size_t n = 3 * (size_t(1) << 15) + 5;
  const MemberSettings settings = member_settings(ModelSpec{});
  const ParamTensor tensor{0, int64_t(n), 0, TensorRole::kernel, 0};
  const LayerSettings layer;
  auto step = [&](int threads) {
    CpuBackend cpu(threads);
    std::vector<float> w = random_floats(n, 1), g = random_floats(n, 2), m = random_floats(n, 3),
                       v(n, 0.5f);
    StepState state;
    state.t = 3;
    Pack pack;
    pack.step = &state;
    OptimizerStep s;
    s.params = w.data(), s.grads = g.data(), s.slot[0] = m.data(), s.slot[1] = v.data(),
    s.count = int64_t(n);
    s.tensors = &tensor, s.tensor_count = 1, s.blocks = param_blocks(int64_t(n));
    s.settings = &settings, s.layers = &layer, s.batch_rows = 32;
    cpu.optimizer_step(s, pack);
    EXPECT_EQ(state.first_row, 32) << "moved past the batch once";
    return std::make_tuple(w, m, v);
  };
  const auto one = step(1);
  for (int threads : {2, 3}) EXPECT_TRUE(step(threads) == one) << threads << " threads";
}

// 16 features -> Dense(256, relu) -> Dense(128, relu) -> Dense(4, softmax): the wide layers'
// products are split on two threads, at batch 64 by columns (their outputs are wider than tall),
// at batch 300 by rows (and the epoch's last batch of 150 rows both ways: 150 x 256 by columns,
// 150 x 128 by rows).
ModelSpec wide_classifier(int batch_size) {
  ModelSpec spec = test::classifier(
      5, 1e-3f, {{256, Activation::relu}, {128, Activation::relu}, {4, Activation::softmax}});
  spec.input = 16;
  spec.fit.batch_size = batch_size;
  spec.memory.limit_bytes = 64 << 20;
  return spec;
}

struct Trained {
  FitResult fit;
  std::vector<float> params;
};

Trained train(int threads, bool graphs, int batch_size) {
  CpuBackend cpu(threads);
  const DataSplit data =
      make_synthetic("teacher:rows=600,features=16,classes=4");  // 450 training rows
  DeviceData resident(cpu, data.train);
  Model model(wide_classifier(batch_size), cpu);
  FitOptions options;
  options.graphs = graphs;
  FitResult fit = mf::fit(model, resident, options);
  return {std::move(fit), model.get_params()};
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(CpuThreads, AModelAloneOnNThreadsGivesTheNumbersOfEveryRunOnN) {
  for (int batch : {64, 300})
    for (int threads : {2, 3}) {
      SCOPED_TRACE("batch " + std::to_string(batch) + ", " + std::to_string(threads) + " threads");
      const Trained first = train(threads, true, batch), again = train(threads, true, batch),
                    unrecorded = train(threads, false, batch);
      for (const Trained* other : {&again, &unrecorded}) {
        EXPECT_TRUE(other->params == first.params) << "the final weights differ";
        ASSERT_EQ(other->fit.epochs.size(), 2u);
        for (size_t e = 0; e < 2; ++e) {
          EXPECT_TRUE(same_bits(other->fit.epochs[e].loss, first.fit.epochs[e].loss));
          EXPECT_TRUE(same_bits(other->fit.epochs[e].val_loss, first.fit.epochs[e].val_loss));
        }
      }
    }
}

TEST(CpuThreads, AModelAloneOnTwoThreadsTrainsAsOnOneToFloatRounding) {
  for (int batch : {64, 300}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const Trained one = train(1, true, batch), two = train(2, true, batch);
    ASSERT_EQ(one.params.size(), two.params.size());
    float worst = 0;
    for (size_t i = 0; i < one.params.size(); ++i)
      worst = std::max(
          worst, std::fabs(one.params[i] - two.params[i]) / (1e-3f + std::fabs(one.params[i])));
    EXPECT_LT(worst, 1e-3f) << "the worst relative difference of a weight after 2 epochs";
    for (size_t e = 0; e < 2; ++e)
      EXPECT_NEAR(two.fit.epochs[e].loss, one.fit.epochs[e].loss, 1e-5 * one.fit.epochs[e].loss);
  }
}

}  // namespace
}  // namespace mf
