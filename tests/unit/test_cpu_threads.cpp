// The cpu backend's threads (backends/cpu/cpu_threads.h, cpu_cost.h, spread_choice.h): a team that
// runs every part once whoever takes it, products cut into tiles by their shape alone, and a step
// that spreads over the team only where that is measured to pay. So a model gives the same bits on
// any number of threads, spread or not.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/cpu_cost.h"
#include "backends/cpu/cpu_threads.h"
#include "backends/cpu/spread_choice.h"
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

TEST(CpuThreads, ATeamRunsEveryPartOnceRunAfterRun) {
  for (int threads : {1, 2, 5}) {
    cpu::Team team(threads);
    // Many runs in a row, of part counts below, at and above the team's size: a helper late for
    // one run must never take a part of the next.
    for (int run = 0; run < 2000; ++run) {
      const int parts = 1 + run % 11;
      std::vector<std::atomic<int>> ran(static_cast<size_t>(parts));
      team.run(parts, [&](int part) { ran[size_t(part)].fetch_add(1); });
      for (int p = 0; p < parts; ++p)
        ASSERT_EQ(ran[size_t(p)].load(), 1) << threads << " threads, run " << run << " part " << p;
    }
    EXPECT_EQ(team.shared_runs(), threads == 1 ? 0 : 2000 - 2000 / 11 - 1)
        << "every run of two parts or more, and only those, is handed to the helpers";
  }
}

TEST(CpuThreads, ATeamsCallerTakesEveryPartAHelperHasNotReached) {
  // A helper held in a part stands for one the kernel has descheduled: the caller finishes every
  // other part, and the run ends when the held part does.
  cpu::Team team(2);
  std::atomic<bool> release{false};
  std::atomic<int> held_by_helper{0}, ran{0};
  const std::thread::id caller = std::this_thread::get_id();
  std::thread releaser([&] {
    while (ran.load() < 63) std::this_thread::yield();
    release = true;
  });
  team.run(64, [&](int) {
    if (std::this_thread::get_id() != caller && held_by_helper.fetch_add(1) == 0)
      while (!release) std::this_thread::yield();
    ran.fetch_add(1);
  });
  releaser.join();
  EXPECT_EQ(ran.load(), 64);
  EXPECT_LE(held_by_helper.load(), 1) << "the helper held its first part until the caller had "
                                         "run every other";
}

TEST(CpuThreads, ATeamRefusesMorePartsThanItCanCount) {
  cpu::Team team(2);
  EXPECT_THROW(team.run(cpu::Team::kMostParts + 1, [](int) {}), std::invalid_argument);
  int ran = 0;
  team.run(3, [&](int) { ++ran; });
  EXPECT_EQ(ran, 3) << "the team still works after a refusal";
}

TEST(CpuThreads, AProductsTilesAreAFunctionOfItsShapeWithNoneEmpty) {
  EXPECT_EQ(cpu::product_tiles(cpu::kLeastTileMacs - 1, 1000, 1), 1);
  EXPECT_EQ(cpu::product_tiles(int64_t(1) << 30, 1000, 1), cpu::kMostTiles);
  EXPECT_EQ(cpu::product_tiles(int64_t(1) << 30, 20, 16), 2) << "no more tiles than grains";
  for (int64_t span : {1, 10, 100, 784})
    for (int64_t grain : {1, 16})
      for (int64_t macs : {int64_t(1) << 17, int64_t(1) << 20, int64_t(1) << 24}) {
        const int tiles = cpu::product_tiles(macs, span, grain);
        ASSERT_GE(tiles, 1);
        ASSERT_LE(tiles, cpu::kMostTiles);
        for (int t = 0; t < tiles; ++t)
          EXPECT_GT(cpu::piece(span, {t, tiles}, grain).size(), 0)
              << "tile " << t << " of " << tiles << ", span " << span << " by " << grain;
      }
}

TEST(CpuThreads, TheCostModelIsMeasuredAndGrowsWithTheWork) {
  const cpu::CostModel& cost = cpu::CostModel::measured();
  EXPECT_GT(cost.mac_s(), 0);
  EXPECT_GT(cost.float_s(), 0);
  EXPECT_LT(cost.product(1000), cost.product(1000000));
  EXPECT_LT(cost.element(1000), cost.element(1000000));
  EXPECT_EQ(&cost, &cpu::CostModel::measured()) << "measured once a process";
}

// Trial launches of `alone_s` and `spread_s` seconds (alone first, as a trial alternates), then
// whether the choice spreads.
bool choice_after_trial(cpu::SpreadChoice& choice, double alone_s, double spread_s) {
  for (int i = 0; i < 2 * cpu::SpreadChoice::kTrials; ++i)
    choice.launched(choice.spreads() ? spread_s : alone_s);
  return choice.spreads();
}

TEST(CpuThreads, AStepSpreadsOnlyWhereItsTrialMeasuresThatItPays) {
  {
    cpu::SpreadChoice choice;
    EXPECT_FALSE(choice.spreads()) << "a trial starts alone";
    EXPECT_TRUE(choice_after_trial(choice, 1e-3, 0.6e-3));
  }
  {
    cpu::SpreadChoice choice;
    EXPECT_FALSE(choice_after_trial(choice, 1e-3, 0.97e-3)) << "within the margin: alone";
  }
  // A machine that grows busy: the next trial goes back to alone. Trials come after 0.125 s of
  // launches, then 0.25, 0.5... up to kRetrial_s. (Launches of 2^-10 s, which add up exactly.)
  const double launch_s = 1.0 / 1024;
  cpu::SpreadChoice choice;
  ASSERT_TRUE(choice_after_trial(choice, 2 * launch_s, launch_s));
  for (double retrial_s = cpu::SpreadChoice::kFirstRetrial_s; retrial_s <= 4;
       retrial_s = std::min(2 * retrial_s, cpu::SpreadChoice::kRetrial_s)) {
    SCOPED_TRACE("after " + std::to_string(retrial_s) + " s");
    for (int i = 0; i < int(retrial_s / launch_s); ++i) {
      ASSERT_TRUE(choice.spreads()) << "launch " << i << " after the trial";
      choice.launched(launch_s);
    }
    ASSERT_TRUE(choice_after_trial(choice, 2 * launch_s, launch_s));
    if (retrial_s == cpu::SpreadChoice::kRetrial_s) break;
  }
  for (int i = 0; i < int(cpu::SpreadChoice::kRetrial_s / launch_s); ++i) choice.launched(launch_s);
  EXPECT_FALSE(choice_after_trial(choice, launch_s, 2 * launch_s));
}

// Adam over 3 * 2^17 + 5 floats in one tensor, spread over 2 and 3 threads: the bits of one.
TEST(CpuThreads, AdamSpreadOverThreadsGivesTheBitsOfOneThread) {
  const size_t n = 3 * (size_t(1) << 17) + 5;
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
    EXPECT_EQ(cpu.spread_runs(), threads > 1 ? 1 : 0) << "spread over the team";
    return std::make_tuple(w, m, v);
  };
  const auto one = step(1);
  for (int threads : {2, 3}) EXPECT_TRUE(step(threads) == one) << threads << " threads";
}

// 64 features -> Dense(512, relu) -> Dense(256, relu) -> Dense(4, softmax) for 4 epochs: products
// worth spreading (the first layer's forward product at batch 300 is 9.8M multiply-adds), at batch
// 64 tiled by columns (their outputs are wider than tall), at batch 300 by rows (and the epoch's
// last batch of 150 rows both ways). At batch 300 each step's graph is launched once an epoch: the
// first two launches time its operations, the next ones are its trial's, alone then spread.
ModelSpec wide_classifier(int batch_size) {
  ModelSpec spec = test::classifier(
      5, 1e-3f, {{512, Activation::relu}, {256, Activation::relu}, {4, Activation::softmax}});
  spec.input = 64;
  spec.fit.epochs = 4;
  spec.fit.batch_size = batch_size;
  spec.memory.limit_bytes = 64 << 20;
  return spec;
}

struct Trained {
  FitResult fit;
  std::vector<float> params;
  int64_t spread_runs = 0;
};

Trained train(int threads, bool graphs, int batch_size) {
  CpuBackend cpu(threads);
  // 450 training rows
  const DataSplit data = make_synthetic("teacher:rows=600,features=64,classes=4");
  DeviceData resident(cpu, data.train);
  Model model(wide_classifier(batch_size), cpu);
  FitOptions options;
  options.graphs = graphs;
  FitResult fit = mf::fit(model, resident, options);
  return {std::move(fit), model.get_params(), cpu.spread_runs()};
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(CpuThreads, AModelTrainsToTheSameBitsOnAnyNumberOfThreads) {
  for (int batch : {64, 300})
    for (bool graphs : {true, false}) {
      SCOPED_TRACE("batch " + std::to_string(batch) + (graphs ? ", recorded" : ", unrecorded"));
      const Trained one = train(1, graphs, batch);
      EXPECT_EQ(one.spread_runs, 0);
      for (int threads : {2, 3}) {
        SCOPED_TRACE(std::to_string(threads) + " threads");
        const Trained other = train(threads, graphs, batch);
        // A recorded step spreads in half its first trial's launches, an unrecorded one wherever
        // the estimate says: either way some operations ran on the team.
        EXPECT_GT(other.spread_runs, 0) << "nothing was spread: the test would prove nothing";
        EXPECT_TRUE(other.params == one.params) << "the final weights differ";
        ASSERT_EQ(other.fit.epochs.size(), 4u);
        for (size_t e = 0; e < 4; ++e) {
          EXPECT_TRUE(same_bits(other.fit.epochs[e].loss, one.fit.epochs[e].loss));
          EXPECT_TRUE(same_bits(other.fit.epochs[e].val_loss, one.fit.epochs[e].val_loss));
        }
      }
    }
}

}  // namespace
}  // namespace mf
