// Model construction: parameter counts, the memory plan (bytes computed by hand
// from the layout in nn/model.h: every part rounded up to 256 bytes), the cap,
// Keras's Glorot-uniform initialisation, and the shuffle permutation.
#include "nn/model.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_backend.h"
#include "data/dataset.h"
#include "nn/device_data.h"
#include "nn/epoch_iterator.h"
#include "nn/fit.h"
#include "runtime/bytes.h"
#include "runtime/error.h"
#include "test_support.h"

namespace mf {
namespace {

using test::contains;

ModelSpec spec_of(int input, std::vector<LayerSpec> layers, Loss loss, int batch = 32) {
  ModelSpec spec = test::mlp(input, std::move(layers), loss, "test-model");
  spec.fit.batch_size = batch;
  return spec;
}

ModelSpec small_spec() {  // 10-50-3, softmax, batch 100
  return spec_of(10, {{50, Activation::relu}, {3, Activation::softmax}},
                 Loss::sparse_categorical_crossentropy, 100);
}

TEST(ParamCount, KerasCounts) {
  // Keras's model.summary(): Σ (in + 1) * out.
  EXPECT_EQ(Model::param_count(spec_of(
                784, {{256, Activation::relu}, {128, Activation::relu}, {10, Activation::softmax}},
                Loss::sparse_categorical_crossentropy)),
            235146);
  EXPECT_EQ(Model::param_count(spec_of(784, {{128, Activation::relu}, {10, Activation::softmax}},
                                       Loss::sparse_categorical_crossentropy)),
            101770);
  EXPECT_EQ(Model::param_count(spec_of(20, {{64, Activation::relu}, {1, Activation::sigmoid}},
                                       Loss::binary_crossentropy)),
            1409);
  EXPECT_EQ(Model::param_count(spec_of(1, {{1, Activation::linear}}, Loss::mse)), 2);
}

// By hand for 10-50-3, batch 100, 1000 training rows, Adam (every part rounded up to 256 B):
//   P = 11*50 + 51*3 = 703 floats = 2812 B -> 2816: parameters, gradients, adam m, adam v
//   layer outputs: 100*50 floats = 20000 B -> 20224; 100*3 floats = 1200 B -> 1280
//   backward dY and dX: the widest layer each, 20224 + 20224
//   row values: the loss and the accuracy, 100*2 floats = 800 B -> 1024; loss totals 16 B -> 256;
//   the structs the kernels read: member settings, layer settings (2 layers), parameter tensors (4:
//   two kernels, two biases) and step state, each rounded up: the model, kModel; and for fitting
//   (the EpochIterator's): batch x 1000 floats -> 4096, batch y (class index) 100 floats -> 512,
//   shuffle order 1000 ints -> 4096, 8704 more
size_t aligned(size_t bytes) { return MemoryPool::aligned(bytes); }
const size_t kStructs = aligned(sizeof(MemberSettings)) + aligned(2 * sizeof(LayerSettings)) +
                        aligned(4 * sizeof(ParamTensor)) + aligned(sizeof(StepState));
const size_t kModel = 4 * 2816 + 20224 + 1280 + 2 * 20224 + 1024 + 256 + kStructs;

TEST(MemoryPlan, ExactBytesByHand) {
  const MemoryPlan p = training_plan(small_spec(), 1000);
  const std::vector<std::pair<std::string, size_t>> want = {
      {"parameters", 2816},
      {"gradients", 2816},
      {"adam m", 2816},
      {"adam v", 2816},
      {"layer 1 output", 20224},
      {"layer 2 output", 1280},
      {"backward dY", 20224},
      {"backward dX", 20224},
      {"row values", 1024},
      {"loss totals", 256},
      {"member settings", aligned(sizeof(MemberSettings))},
      {"layer settings", aligned(2 * sizeof(LayerSettings))},
      {"parameter tensors", aligned(4 * sizeof(ParamTensor))},
      {"step state", aligned(sizeof(StepState))},
      {"batch x", 4096},
      {"batch y", 512},
      {"shuffle order", 4096}};
  ASSERT_EQ(p.parts.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(p.parts[i].name, want[i].first);
    EXPECT_EQ(p.parts[i].bytes, want[i].second) << want[i].first;
  }
  EXPECT_EQ(p.total(), kModel + 8704);
  EXPECT_EQ(Model::plan(small_spec()).total(), kModel);  // the model alone: no batches, no order
  EXPECT_EQ(p.bytes_of("batch y"), 512u);
  EXPECT_EQ(p.bytes_of("no such part"), 0u);
}

TEST(MemoryPlan, OptimizerStateDependsOnTheOptimizer) {
  ModelSpec spec = small_spec();
  spec.optimizer.kind = OptimizerKind::sgd;
  spec.optimizer.momentum = 0.f;
  // plain SGD keeps no state
  EXPECT_EQ(training_plan(spec, 1000).total(), kModel + 8704 - 2 * 2816u);
  spec.optimizer.momentum = 0.9f;
  // one velocity per parameter
  EXPECT_EQ(training_plan(spec, 1000).bytes_of("sgd velocity"), 2816u);
  EXPECT_EQ(training_plan(spec, 1000).total(), kModel + 8704 - 2816u);
}

TEST(MemoryPlan, MseTargetsHaveOneColumnPerOutput) {
  ModelSpec spec = small_spec();
  spec.loss = Loss::mse;
  spec.layers.back().activation = Activation::linear;
  // y: 100 rows * 3 floats = 1200 B -> 1280 instead of 512.
  EXPECT_EQ(training_plan(spec, 1000).bytes_of("batch y"), 1280u);
}

// The Keras layers' buffers, by hand: 10 -> Dense(20, gelu, l2 kernel, l1 activity) ->
// BatchNormalization -> Dropout -> Dense(3, softmax), RMSprop (momentum, centered, clipnorm), batch
// 100.
//   parameters: 10*20 + 20 + 20 gamma + 20 beta + 20*3 + 3 = 323 floats = 1292 B -> 1536, and so
//   each of the gradients and RMSprop's three slots; moving mean and variance 40 floats -> 256
//   layer 1: output and (gelu's) pre-activation, 100*20 floats = 8000 B -> 8192 each; layer 2
//   (BatchNormalization): output 8192 and its batch mean and inverse, 40 floats -> 256; layer 3
//   (Dropout): output 8192 (its mask is a hash, not stored); layer 4: 300 floats -> 1280
//   backward dY, dX: 100 * the widest (20) -> 8192 each; row values: loss and accuracy, 200 floats
//   -> 1024; totals 2 doubles -> 256
//   penalty partials: one double per parameter block of 256 (six tensors, one block each) -> 256;
//   activity partials: 2000 outputs in 8 blocks -> 256; gradient norm partials (6) and the norms
//   (6 tensors and the global one) -> 256 each
TEST(MemoryPlan, TheKerasLayersBuffersByHand) {
  LayerSpec norm, drop;
  norm.kind = LayerKind::batch_normalization;
  drop.kind = LayerKind::dropout, drop.rate = 0.5;
  ModelSpec spec = spec_of(10, {{20, Activation::gelu}, norm, drop, {3, Activation::softmax}},
                           Loss::sparse_categorical_crossentropy, 100);
  spec.layers[0].kernel_regularizer = {0, 1e-4f};
  spec.layers[0].activity_regularizer = {1e-5f, 0};
  spec.optimizer.kind = OptimizerKind::rmsprop, spec.optimizer.momentum = 0.5f,
  spec.optimizer.centered = true;
  spec.optimizer.clip = ClipKind::norm, spec.optimizer.clip_value = 1.f;
  const std::vector<std::pair<std::string, size_t>> want = {
      {"parameters", 1536},
      {"gradients", 1536},
      {"rmsprop velocity", 1536},
      {"rmsprop momentum", 1536},
      {"rmsprop average gradient", 1536},
      {"moving statistics", 256},
      {"layer 1 output", 8192},
      {"layer 1 pre-activation", 8192},
      {"layer 2 output", 8192},
      {"layer 2 batch statistics", 256},
      {"layer 3 output", 8192},
      {"layer 4 output", 1280},
      {"backward dY", 8192},
      {"backward dX", 8192},
      {"row values", 1024},
      {"loss totals", 256},
      {"penalty partials", 256},
      {"activity penalty partials", 256},
      {"gradient norm partials", 256},
      {"gradient norms", 256},
      {"member settings", aligned(sizeof(MemberSettings))},
      {"layer settings", aligned(4 * sizeof(LayerSettings))},
      {"parameter tensors", aligned(6 * sizeof(ParamTensor))},
      {"step state", aligned(sizeof(StepState))}};
  const MemoryPlan plan = Model::plan(spec);
  ASSERT_EQ(plan.parts.size(), want.size()) << plan.describe();
  size_t total = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(plan.parts[i].name, want[i].first);
    EXPECT_EQ(plan.parts[i].bytes, want[i].second) << want[i].first;
    total += want[i].second;
  }
  EXPECT_EQ(Model::param_count(spec), 323);
  EXPECT_EQ(Model::weight_count(spec), 323 + 40);
  // The cap holds it exactly: the pool takes the plan and no more, and a byte less is refused.
  CpuBackend cpu;
  spec.memory = {total, PoolMode::grow};
  Model model(spec, cpu);
  EXPECT_EQ(model.pool_stats().peak_bytes, total);
  spec.memory.limit_bytes = total - 1;
  EXPECT_THROW(Model(spec, cpu), OutOfMemory);
}

TEST(Model, PoolHoldsExactlyThePlan) {
  CpuBackend cpu;
  const ModelSpec spec = small_spec();
  Model model(spec, cpu);
  const size_t total = Model::plan(spec).total();
  EXPECT_EQ(model.pool_stats().peak_bytes, total);
  EXPECT_EQ(model.pool_stats().in_use_bytes, total);
  EXPECT_EQ(model.pool_stats().reserved_bytes, total);  // grow: exactly what was asked
  EXPECT_EQ(model.pool_stats().cap_bytes, spec.memory.limit_bytes);
}

// Fitting's batches come from the model's pool, exactly as training_plan lists them, and go back.
TEST(Model, AnEpochIteratorTakesItsPlanFromThePool) {
  CpuBackend cpu;
  const ModelSpec spec = small_spec();
  const DataSplit split = make_synthetic("teacher:rows=1000,features=10,classes=3");
  DeviceData data(cpu, split.train);
  Model model(spec, cpu);
  {
    EpochIterator batches(model, data, 1000);
    EXPECT_EQ(model.pool_stats().in_use_bytes, training_plan(spec, 1000).total());
    EXPECT_EQ(batches.steps(), 10);
  }
  EXPECT_EQ(model.pool_stats().in_use_bytes, Model::plan(spec).total());
}

TEST(Model, ReservePoolTakesTheCap) {
  CpuBackend cpu;
  ModelSpec spec = small_spec();
  spec.memory = {size_t(1) << 20, PoolMode::reserve};
  Model model(spec, cpu);
  EXPECT_EQ(model.pool_stats().reserved_bytes, size_t(1) << 20);
  EXPECT_EQ(model.pool_stats().peak_bytes, kModel);
}

TEST(Model, PlanExactlyAtTheCapFits) {
  CpuBackend cpu;
  for (PoolMode mode : {PoolMode::grow, PoolMode::reserve}) {
    ModelSpec spec = small_spec();
    spec.memory = {kModel, mode};
    EXPECT_NO_THROW(Model(spec, cpu)) << to_string(mode);
  }
}

TEST(Model, PlanOverTheCapIsOutOfMemoryNamingModelAndCap) {
  CpuBackend cpu;
  for (PoolMode mode : {PoolMode::grow, PoolMode::reserve}) {
    ModelSpec spec = small_spec();
    spec.name = "too-big";
    spec.memory = {kModel - 1, mode};
    SCOPED_TRACE(to_string(mode));
    const std::string message = test::user_error<OutOfMemory>([&] { Model model(spec, cpu); });
    EXPECT_TRUE(contains(message, "too-big")) << message;
    // One byte apart, both print as the same KiB: the exact counts tell them apart.
    // the cap
    EXPECT_TRUE(contains(message, "(" + std::to_string(kModel - 1) + " bytes)")) << message;
    // what it needs
    EXPECT_TRUE(contains(message, "(" + std::to_string(kModel) + " bytes)")) << message;
    EXPECT_FALSE(contains(message, "\n")) << message;
  }
}

TEST(Model, BatchLargerThanTheBuffersIsRefused) {
  CpuBackend cpu;
  Model model(small_spec(), cpu);
  std::vector<float> X(101 * 10, 0.f), T(101, 0.f);
  EXPECT_ANY_THROW(model.evaluate_batch(X.data(), T.data(), 101));
  EXPECT_ANY_THROW(model.evaluate_batch(X.data(), T.data(), 0));
}

// ---- Keras initialisation ---------------------------------------------------------

TEST(Init, GlorotUniformKernelsAndZeroBiases) {
  CpuBackend cpu;
  const ModelSpec spec = spec_of(784, {{128, Activation::relu}, {10, Activation::softmax}},
                                 Loss::sparse_categorical_crossentropy);
  Model model(spec, cpu);
  const std::vector<float> p = model.get_params();
  ASSERT_EQ(p.size(), 101770u);
  size_t at = 0;
  int in = spec.input;
  for (const LayerSpec& l : spec.layers) {
    const double limit = std::sqrt(6.0 / (in + l.units));  // Keras glorot_uniform
    const size_t n = size_t(in) * l.units;
    double max_abs = 0, sum = 0, sum_sq = 0;
    for (size_t i = 0; i < n; ++i) {
      const double w = p[at + i];
      ASSERT_LE(std::abs(w), limit) << "kernel element " << i;
      max_abs = std::max(max_abs, std::abs(w));
      sum += w;
      sum_sq += w * w;
    }
    // Uniform on [-limit, limit]: the extremes are reached, mean 0, variance limit^2/3.
    EXPECT_GT(max_abs, 0.99 * limit);
    EXPECT_NEAR(sum / n, 0.0, 0.05 * limit);
    EXPECT_NEAR(sum_sq / n, limit * limit / 3, 0.1 * limit * limit / 3);
    for (int j = 0; j < l.units; ++j) EXPECT_EQ(p[at + n + j], 0.f) << "bias " << j;
    at += n + l.units;
    in = l.units;
  }
}

TEST(Init, SameSeedSameParamsOtherSeedOthers) {
  CpuBackend cpu;
  ModelSpec spec = small_spec();
  spec.seed = 42;
  const std::vector<float> a = Model(spec, cpu).get_params();
  const std::vector<float> b = Model(spec, cpu).get_params();
  EXPECT_EQ(a, b);
  spec.seed = 43;
  const std::vector<float> c = Model(spec, cpu).get_params();
  ASSERT_EQ(a.size(), c.size());
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += a[i] != c[i];
  EXPECT_GT(differ, 600u);  // all 650 kernel elements but for coincidences; biases are 0 in both
}

TEST(Init, SetParamsRoundTrips) {
  CpuBackend cpu;
  Model model(small_spec(), cpu);
  std::vector<float> p(size_t(model.param_count()));
  std::iota(p.begin(), p.end(), -100.f);
  model.set_params(p);
  EXPECT_EQ(model.get_params(), p);
}

// ---- The epoch permutation ---------------------------------------------------------

std::vector<int> order_of(int n, uint64_t seed, int epoch) {
  std::vector<int> order(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    order[i] = int(permute_index(uint32_t(i), uint32_t(n), seed, uint32_t(epoch)));
  return order;
}

bool is_permutation_of_range(std::vector<int> order) {
  std::sort(order.begin(), order.end());
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != int(i)) return false;
  return true;
}

TEST(PermuteIndex, IsAPermutationForManySizes) {
  for (int n : {1, 2, 3, 4, 5, 7, 16, 17, 1000, 1024, 60000}) {
    for (int epoch : {0, 1, 9}) {
      for (uint64_t seed : {0ull, 42ull, 0xffffffffffffull}) {
        EXPECT_TRUE(is_permutation_of_range(order_of(n, seed, epoch)))
            << "n " << n << " epoch " << epoch << " seed " << seed;
      }
    }
  }
}

TEST(PermuteIndex, DiffersBetweenEpochsAndSeeds) {
  for (int n : {1000, 60000}) {
    const std::vector<int> e0 = order_of(n, 42, 0), e1 = order_of(n, 42, 1), s = order_of(n, 43, 0);
    EXPECT_NE(e0, e1) << n;
    EXPECT_NE(e0, s) << n;
    std::vector<int> identity(static_cast<size_t>(n));
    std::iota(identity.begin(), identity.end(), 0);
    EXPECT_NE(e0, identity) << n;
    // A real shuffle, not a rotation: few elements keep their place (about 1 expected).
    int fixed = 0;
    for (int i = 0; i < n; ++i) fixed += e0[i] == i;
    EXPECT_LT(fixed, 20) << n;
  }
  // Small n: over 10 epochs, 7 elements take several different orders.
  std::set<std::vector<int>> seen;
  for (int epoch = 0; epoch < 10; ++epoch) seen.insert(order_of(7, 42, epoch));
  EXPECT_GE(seen.size(), 5u);
}

TEST(PermuteIndex, FirstElementIsRoughlyUniform) {
  // Where index 0 goes over 2000 seeds, for n = 10: each bucket expects 200.
  std::vector<int> count(10, 0);
  for (uint64_t seed = 0; seed < 2000; ++seed) ++count[permute_index(0, 10, seed, 0)];
  for (int c : count) EXPECT_NEAR(c, 200, 60);
}

TEST(CpuBackend, ShuffleIsPermuteIndex) {
  CpuBackend cpu;
  for (int n : {1, 7, 1000}) {
    std::vector<int> order(size_t(n), -1);
    MemberSettings settings;
    settings.seed = 1234;
    cpu.shuffle(order.data(), n, &settings, 3);
    EXPECT_EQ(order, order_of(n, 1234, 3));
  }
}

TEST(CpuBackend, GatherCopiesRowsInOrder) {
  CpuBackend cpu;
  const int rows = 5, cols = 3;
  std::vector<float> src(rows * cols);
  for (int i = 0; i < rows * cols; ++i) src[i] = float(i);  // row r is {3r, 3r+1, 3r+2}
  const std::vector<int> order = {4, 0, 4, 2};
  std::vector<float> dst(order.size() * cols, -1.f);
  cpu.gather(src.data(), cols, order.data(), int(order.size()), dst.data());
  const std::vector<float> want = {12, 13, 14, 0, 1, 2, 12, 13, 14, 6, 7, 8};
  EXPECT_EQ(dst, want);
}

}  // namespace
}  // namespace mf

namespace mf {
namespace {

std::vector<ModelSpec> three_members() {
  std::vector<ModelSpec> specs;
  for (int z = 0; z < 3; ++z) {
    ModelSpec spec = small_spec();
    spec.name = "member-" + std::to_string(z);
    spec.seed = uint64_t(z + 1);
    spec.optimizer.learning_rate = 1e-3f * float(z + 1);
    spec.memory.limit_bytes = size_t(1 + z) << 20;  // caps may differ
    specs.push_back(spec);
  }
  return specs;
}

TEST(Pack, OnePoolHoldsEveryMembersPlanSideBySide) {
  CpuBackend cpu;
  Model pack(three_members(), cpu);
  EXPECT_EQ(pack.members(), 3);
  EXPECT_EQ(pack.pool_stats().cap_bytes, size_t(6) << 20);  // the sum of the members' caps
  EXPECT_EQ(pack.pool_stats().peak_bytes, 3 * Model::plan(small_spec()).total());
  EXPECT_EQ(pack.pack().stride, int64_t(Model::plan(small_spec()).total()));
  for (int z = 0; z < 3; ++z) {
    const PoolStats share = pack.member_share(z);
    EXPECT_EQ(share.cap_bytes, size_t(1 + z) << 20);
    EXPECT_EQ(share.peak_bytes, Model::plan(small_spec()).total());  // what it would take alone
  }
}

TEST(Pack, EachMemberStartsFromItsOwnSeed) {
  CpuBackend cpu;
  const std::vector<ModelSpec> specs = three_members();
  Model pack(specs, cpu);
  for (int z = 0; z < 3; ++z)
    EXPECT_EQ(pack.get_params(z), Model(specs[size_t(z)], cpu).get_params()) << z;
  EXPECT_NE(pack.get_params(0), pack.get_params(1));
}

TEST(Pack, AMemberOverItsOwnCapIsOutOfMemoryNamingIt) {
  CpuBackend cpu;
  std::vector<ModelSpec> specs = three_members();
  // the others' caps would cover it
  specs[2].memory.limit_bytes = Model::plan(specs[2]).total() - 1;
  const std::string message = test::user_error<OutOfMemory>([&] { Model pack(specs, cpu); });
  EXPECT_TRUE(contains(message, "member-2")) << message;
}

TEST(Pack, MembersMustShareTheirShapeAndFit) {
  CpuBackend cpu;
  std::vector<ModelSpec> specs = three_members();
  EXPECT_EQ(pack_key(specs[0]), pack_key(specs[1]));  // seed, learning rate and cap may differ
  EXPECT_EQ(pack_difference(specs[1], specs[0]), "");
  specs[1].layers[0].units = 51;
  EXPECT_NE(pack_key(specs[0]), pack_key(specs[1]));
  EXPECT_EQ(pack_difference(specs[1], specs[0]), "layers[0].units 51, not 50");
  const std::string message =
      test::user_error<std::invalid_argument>([&] { Model pack(specs, cpu); });
  EXPECT_TRUE(contains(
      message, "'member-1' and 'member-0' cannot share a pack: its layers[0].units 51, not 50"))
      << message;
  specs[1] = small_spec();
  specs[1].fit.batch_size = 64;
  EXPECT_NE(pack_key(specs[0]), pack_key(specs[1]));
  EXPECT_EQ(pack_difference(specs[1], specs[0]), "fit.batch_size 64, not 100");
  // A layer more is named by the layers' count before any layer's own field.
  specs[1] = small_spec();
  specs[1].layers.insert(specs[1].layers.begin() + 1, specs[1].layers[0]);
  EXPECT_EQ(pack_difference(specs[1], specs[0]), "layers 3, not 2");
  specs[1] = small_spec();
  specs[1].layers[0].activation = Activation::tanh;
  EXPECT_EQ(pack_difference(specs[1], specs[0]), "layers[0].activation tanh, not relu");
  specs[1] = small_spec();
  specs[1].fit.validation_split = 0.2;
  EXPECT_EQ(pack_difference(specs[1], specs[0]), "fit.validation_split 0.2, not 0");
  // Every difference, up to one in the layers' structure.
  specs[1].layers[0].units = 51;
  EXPECT_EQ(pack_difference(specs[1], specs[0]),
            "layers[0].units 51, not 50; fit.validation_split 0.2, not 0");
  specs[1].layers[0].kind = LayerKind::dropout;
  EXPECT_EQ(pack_difference(specs[1], specs[0]), "layers[0].type Dropout, not Dense");
  // The members share one input pipeline: its settings, and whether there is preprocessing at all.
  specs[1] = small_spec();
  specs[1].pipeline.prefetch = 3;
  EXPECT_NE(pack_key(specs[0]), pack_key(specs[1]));
  specs[1] = small_spec();
  specs[1].preprocessing =
      Preprocessing::parse(nlohmann::json::parse(R"([{"type": "GaussianNoise", "stddev": 0.1}])"),
                           std::nullopt, specs[1].input, "spec.json");
  EXPECT_NE(pack_key(specs[0]), pack_key(specs[1]));
  EXPECT_THROW(Model(std::vector<ModelSpec>{}, cpu), std::invalid_argument);
}

TEST(Pack, FitAndEvaluateOfOneModelRefuseAPack) {
  CpuBackend cpu;
  const DataSplit split = make_synthetic("teacher:rows=200,features=10,classes=3");
  DeviceData data(cpu, split.train);
  Model pack(three_members(), cpu);
  EXPECT_THROW(fit(pack, data, {}), std::invalid_argument);
  EXPECT_THROW(evaluate(pack, data, 0, 10), std::invalid_argument);
}

}  // namespace
}  // namespace mf
