// A model trained in a pack gives the same result as trained alone: every epoch's metrics, the test
// evaluation and the final weights, bit for bit, on the CPU backend and on the CUDA backend (host
// execution in hostexec_tests, the GPU in gpu_tests: the same code runs the same launches).
// Members differ in seed (weights and data order) and optimizer settings.
#include <cmath>
#include <cstring>

#include "data/dataset.h"
#include "nn/fit.h"
#include "tests/parity/backend_pair.h"
#include "tests/parity/device_under_test.h"
#include "tests/parity/test_sizes.h"
#include "tests/training_specs.h"

namespace mf::test {
namespace {

// Three layers: the classifier with a tanh layer between.
ModelSpec deep_classifier(uint64_t seed, float learning_rate) {
  return test::classifier(
      seed, learning_rate,
      {{24, Activation::relu}, {16, Activation::tanh}, {4, Activation::softmax}});
}

struct Trained {
  FitResult fit;
  Evaluation test;
  std::vector<float> params;
};

std::vector<Trained> train_pack(Backend& backend, const std::vector<ModelSpec>& specs,
                                const Dataset& data, bool graphs = false) {
  DeviceData resident(backend, data);
  Model pack(specs, backend);
  FitOptions options;
  options.graphs = graphs;
  const std::vector<FitResult> fits = fit_pack(pack, resident, options);
  const std::vector<Evaluation> tests = evaluate_pack(pack, resident, 0, resident.rows());
  std::vector<Trained> members;
  for (int z = 0; z < pack.members(); ++z)
    members.push_back({fits[size_t(z)], tests[size_t(z)], pack.get_params(z)});
  return members;
}

Trained train_alone(Backend& backend, const ModelSpec& spec, const Dataset& data) {
  return train_pack(backend, {spec}, data).front();
}

// Equal as stored: NaN equals NaN (mse has no accuracy), and nothing else differs at all.
void expect_same_bits(double want, double got, const std::string& what) {
  EXPECT_EQ(std::memcmp(&want, &got, sizeof want), 0)
      << what << ": alone " << want << ", packed " << got;
}

// Each member of a pack trained on `packed_on` (with or without graphs) against the same model
// trained alone, without graphs, on `alone_on`.
void expect_pack_equals_alone(Backend& packed_on, Backend& alone_on,
                              const std::vector<ModelSpec>& specs, const Dataset& data,
                              bool graphs) {
  const std::vector<Trained> packed = train_pack(packed_on, specs, data, graphs);
  ASSERT_EQ(packed.size(), specs.size());
  for (size_t z = 0; z < specs.size(); ++z) {
    SCOPED_TRACE(packed_on.name() + ", " + specs[z].name + (graphs ? ", graphs" : ""));
    const Trained alone = train_alone(alone_on, specs[z], data);
    EXPECT_EQ(packed[z].fit.status, alone.fit.status);
    EXPECT_EQ(packed[z].fit.why, alone.fit.why);
    EXPECT_EQ(packed[z].fit.samples, alone.fit.samples);
    ASSERT_EQ(packed[z].fit.epochs.size(), alone.fit.epochs.size());
    for (size_t e = 0; e < alone.fit.epochs.size(); ++e) {
      const EpochMetrics &a = alone.fit.epochs[e], &p = packed[z].fit.epochs[e];
      const std::string epoch = "epoch " + std::to_string(e + 1);
      expect_same_bits(a.loss, p.loss, epoch + " loss");
      expect_same_bits(a.accuracy, p.accuracy, epoch + " accuracy");
      expect_same_bits(a.val_loss, p.val_loss, epoch + " val_loss");
      expect_same_bits(a.val_accuracy, p.val_accuracy, epoch + " val_accuracy");
      expect_same_bits(a.learning_rate, p.learning_rate, epoch + " learning_rate");
      ASSERT_EQ(a.metrics.size(), p.metrics.size());
      for (size_t i = 0; i < a.metrics.size(); ++i)
        expect_same_bits(a.metrics[i], p.metrics[i], epoch + " metric");
    }
    EXPECT_EQ(packed[z].fit.stopped_epoch, alone.fit.stopped_epoch);
    EXPECT_EQ(packed[z].fit.restored_epoch, alone.fit.restored_epoch);
    expect_same_bits(alone.test.loss, packed[z].test.loss, "test loss");
    // A diverged member's weights are not finite and go on stepping with the pack: not compared.
    if (alone.fit.status == FitStatus::ok) {
      EXPECT_TRUE(alone.params == packed[z].params) << "the final weights differ";
    }
  }
}

void expect_pack_equals_alone(Backend& backend, const std::vector<ModelSpec>& specs,
                              const Dataset& data, bool graphs = false) {
  expect_pack_equals_alone(backend, backend, specs, data, graphs);
}

// Runs `check` on the CPU backend and on the device under test (skipping only the latter when
// none).
template <class Check>
void on_every_backend(Check check) {
  CpuBackend cpu;
  check(cpu);
  std::string why;
  std::unique_ptr<Backend> device = make_device_under_test(why);
  if (!device) GTEST_SKIP() << "checked on the cpu only: " << why;
  check(*device);
}

TEST(PackTraining, ClassifiersWithDifferentSeedsAndLearningRates) {
  const DataSplit data = make_synthetic(teacher(4));
  on_every_backend([&](Backend& b) {
    expect_pack_equals_alone(
        b, {deep_classifier(1, 1e-2f), deep_classifier(2, 3e-3f), deep_classifier(3, 1e-3f)},
        data.train);
  });
}

TEST(PackTraining, TinyModelsOfTheSeedsSweep) {
  // Batches of 64: 4 and a last of 44 (at the small sizes, tests/parity/test_sizes.h, 1 and a last
  // of 36).
  const DataSplit data = make_synthetic(teacher(2, full_or_small(300, 100)));
  std::vector<ModelSpec> specs;
  for (int i = 0; i < 4; ++i) specs.push_back(tiny(uint64_t(10 + i), 1e-3f * float(1 + i)));
  on_every_backend([&](Backend& b) { expect_pack_equals_alone(b, specs, data.train); });
}

// AUC's histogram is a member's own, in training and validation, with graphs or not.
TEST(PackTraining, MembersKeepTheirOwnAucHistograms) {
  const DataSplit data = make_synthetic(teacher(2, full_or_small(300, 100)));
  std::vector<ModelSpec> specs;
  for (int i = 0; i < 3; ++i) {
    specs.push_back(tiny(uint64_t(20 + i), 3e-3f * float(1 + i)));
    specs.back().fit.validation_split = 0.25f;
    specs.back().metrics = std::vector<MetricSpec>{{"auc", Metric::auc}};
  }
  on_every_backend([&](Backend& b) {
    expect_pack_equals_alone(b, specs, data.train);
    expect_pack_equals_alone(b, specs, data.train, true);
  });
}

// 200 rows (at the small sizes 100): 150 (75) training rows, 4 (2) batches of 32 and a last of 22
// (11).
const std::string kRegression = "regression:rows=" + std::to_string(full_or_small(200, 100));

TEST(PackTraining, SgdWithEachMembersMomentumAndMse) {
  const DataSplit data = make_synthetic(kRegression);
  std::vector<ModelSpec> specs;
  for (float momentum : {0.5f, 0.9f}) {
    ModelSpec spec = deep_classifier(uint64_t(momentum * 10), 0.05f);
    spec.layers = {{12, Activation::sigmoid}, {1, Activation::linear}};
    spec.loss = Loss::mse;
    spec.optimizer.kind = OptimizerKind::sgd;
    spec.optimizer.momentum = momentum;
    specs.push_back(spec);
  }
  on_every_backend([&](Backend& b) { expect_pack_equals_alone(b, specs, data.train); });
}

TEST(PackTraining, AMemberThatDivergesLeavesTheOthersAsAlone) {
  const DataSplit data = make_synthetic(kRegression);
  std::vector<ModelSpec> specs;
  for (float learning_rate : {0.01f, 1e13f, 0.02f}) {  // the middle one diverges in its first epoch
    ModelSpec spec = deep_classifier(7, learning_rate);
    spec.layers = {{8, Activation::relu}, {1, Activation::linear}};
    spec.loss = Loss::mse;
    spec.optimizer.kind = OptimizerKind::sgd;
    spec.fit.epochs = 3;
    specs.push_back(spec);
  }
  on_every_backend([&](Backend& b) {
    expect_pack_equals_alone(b, specs, data.train);
    EXPECT_EQ(train_alone(b, specs[1], data.train).fit.status, FitStatus::diverged);
  });
}

// Members of one shape that differ in every setting a member has of its own: dropout rates, batch
// normalization's momentum and epsilon, regularizer factors, the optimizer's rho, epsilon and
// weight decay, a learning-rate schedule, label smoothing, and callbacks that stop them at other
// epochs (one restoring its best weights, one lowering its rate): each trains as it does alone, and
// a stopped member leaves the others' numbers as they are.
std::vector<ModelSpec> keras_members() {
  std::vector<ModelSpec> specs;
  for (int i = 0; i < 4; ++i) {
    LayerSpec drop, norm;
    drop.kind = LayerKind::dropout, drop.rate = 0.1 * (i + 1);
    norm.kind = LayerKind::batch_normalization, norm.momentum = 0.9 + 0.02 * i,
    norm.epsilon = 1e-3 * (i + 1);
    ModelSpec spec = deep_classifier(uint64_t(40 + i), 2e-3f);
    spec.layers = {
        {12}, norm, {0, Activation::relu}, drop, {8, Activation::gelu}, {4, Activation::softmax}};
    spec.layers[2].kind = LayerKind::activation;
    spec.layers[0].kernel_regularizer = {0, 1e-3f * float(i + 1)};
    spec.layers[4].activity_regularizer = {1e-4f * float(i + 1), 0};
    spec.optimizer.kind = OptimizerKind::rmsprop;
    spec.optimizer.rho = 0.8 + 0.05 * i, spec.optimizer.epsilon = 1e-7f * float(i + 1);
    spec.optimizer.weight_decay = 1e-3f * float(i);
    spec.loss.label_smoothing = 0.05 * i;
    spec.fit.epochs = 4, spec.fit.batch_size = 64;
    specs.push_back(spec);
  }
  ScheduleSpec decay;
  decay.kind = ScheduleKind::exponential_decay, decay.initial_learning_rate = 3e-3,
  decay.decay_steps = 5;
  decay.decay_rate = 0.9;
  specs[1].optimizer.schedule = decay;
  EarlyStoppingSpec early;
  early.monitor = "loss", early.mode = MonitorMode::max, early.patience = 1;  // stops after epoch 2
  specs[2].fit.early_stopping = early;
  // after epoch 3, back to epoch 1's weights
  early.patience = 2, early.restore_best_weights = true;
  specs[3].fit.early_stopping = early;
  ReduceLROnPlateauSpec reduce;
  reduce.monitor = "loss", reduce.mode = MonitorMode::max, reduce.patience = 1;
  specs[0].fit.reduce_lr_on_plateau = reduce;
  return specs;
}

TEST(PackTraining, MembersWithTheirOwnKerasSettingsTrainAsAlone) {
  // 130 rows: 97 training rows, 2 steps an epoch (host execution runs each block's threads).
  const DataSplit data = make_synthetic("teacher:rows=130,classes=4");
  const std::vector<ModelSpec> specs = keras_members();
  CpuBackend cpu;
  const std::vector<Trained> packed = train_pack(cpu, specs, data.train);
  EXPECT_EQ(packed[2].fit.stopped_epoch, 2);
  EXPECT_EQ(packed[3].fit.stopped_epoch, 3);
  EXPECT_EQ(packed[3].fit.restored_epoch, 1);
  EXPECT_EQ(packed[0].fit.epochs.size(), 4u);
  EXPECT_LT(packed[0].fit.epochs.back().learning_rate, specs[0].optimizer.learning_rate);
  for (const Trained& member : packed)  // evaluated after the fit, stopped early or not
    EXPECT_TRUE(member.test.loss > 0 && std::isfinite(member.test.loss)) << member.test.loss;
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP()
      << "checked on the cpu only: its fits take minutes under ThreadSanitizer, which checks these "
         "kernels' synchronization in test_layer_parity.cpp";
#endif
  on_every_backend([&](Backend& b) { expect_pack_equals_alone(b, specs, data.train); });
}

// Every training step captured once as a CUDA graph (one per batch row count: teacher_rows(), 7
// batches of 32 and a last of 23, or at the small sizes 2 and a last of 11; 700 rows in batches of
// 300 end in one of 100, the small sizes' 400 in one of 100 too) and replayed gives the numbers of
// steps launched one by one, for a pack and for a model alone, with Adam and with SGD's momentum.
// Under host execution a replay runs the captured launches with the arguments they had, so a step
// whose launches changed from step to step fails.
TEST(Graphs, StepsReplayedFromGraphsGiveTheNumbersOfStepsLaunchedOneByOne) {
  std::string why;
  std::unique_ptr<Backend> device = make_device_under_test(why);
  if (!device) GTEST_SKIP() << why;
  ASSERT_TRUE(device->has_graphs());
  const DataSplit data = make_synthetic(teacher(4));
  std::vector<ModelSpec> specs = {deep_classifier(1, 1e-2f), deep_classifier(2, 3e-3f)};
  specs[1].optimizer.kind = specs[0].optimizer.kind;
  expect_pack_equals_alone(*device, specs, data.train, true);
  for (ModelSpec& spec : specs)
    spec.optimizer.kind = OptimizerKind::sgd, spec.optimizer.momentum = 0.9f;
  expect_pack_equals_alone(*device, specs, data.train, true);
  expect_pack_equals_alone(*device, {specs[0]}, data.train, true);
  // Batches of 300 rows: the loss pass in two launches (more than 256 rows); no shuffle.
  const DataSplit more = make_synthetic(teacher(4, full_or_small(700, 400)));
  for (ModelSpec& spec : specs) spec.fit = {2, 300, 0.f, false};
  expect_pack_equals_alone(*device, specs, more.train, true);
}

// Dropout's masks and a schedule's rate change every step from the step count on the device, and a
// member EarlyStopping stopped is skipped by the same replayed launches: replayed steps give the
// numbers of steps launched one by one.
TEST(Graphs, ReplayedStepsDrawEachStepsMasksAndRateAndSkipAStoppedMember) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "run without ThreadSanitizer (hostexec_tests, gpu_tests): these fits take "
                  "minutes under it, and "
                  "test_layer_parity.cpp checks the same kernels' synchronization there";
#endif
  std::string why;
  std::unique_ptr<Backend> device = make_device_under_test(why);
  if (!device) GTEST_SKIP() << why;
  ASSERT_TRUE(device->has_graphs());
  const std::vector<ModelSpec> keras = keras_members();
  const DataSplit small = make_synthetic("teacher:rows=130,classes=4");
  expect_pack_equals_alone(*device, {keras[1], keras[2]}, small.train, true);
}

// The cpu backend's recorded steps run a pack's members over its threads, each member's whole step
// on one thread: on 1, 2 or 3 threads, for 5 members (unevenly split) and for 2 (fewer than the
// threads), every member gives the numbers it gives alone on one thread, step by step. So does a
// model alone whose operations are too small to split. Adam and SGD with momentum both.
TEST(PackTraining, OnTheCpusThreadsEachMemberGivesItsNumbersAlone) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the cpu backend's threads are libgomp's, which is not built for "
                  "ThreadSanitizer: it cannot see "
                  "their team's synchronization (run in hostexec_tests without it)";
#endif
  const DataSplit data = make_synthetic("teacher:rows=330,classes=4");
  std::vector<ModelSpec> specs;
  for (int i = 0; i < 5; ++i)
    specs.push_back(deep_classifier(uint64_t(20 + i), 1e-3f * float(1 + i)));
  CpuBackend one;
  for (int threads : {1, 2, 3}) {
    CpuBackend cpu(threads);
    SCOPED_TRACE(std::to_string(threads) + " threads");
    expect_pack_equals_alone(cpu, one, specs, data.train, true);
    expect_pack_equals_alone(cpu, one, {specs[0], specs[1]}, data.train, true);
    expect_pack_equals_alone(cpu, one, {specs[2]}, data.train, true);
  }
  for (ModelSpec& spec : specs)
    spec.optimizer.kind = OptimizerKind::sgd, spec.optimizer.momentum = 0.9f;
  CpuBackend two(2);
  expect_pack_equals_alone(two, one, specs, data.train, true);
}

// Keras's class and sample weights (data/dataset.h RowWeights): members read the data set's weight
// column and train in a pack as alone. classifier()'s validation split is 0.25: the validation rows
// are weighted by sample weights and not by class weights, and the test pass reads the same set.
TEST(PackTraining, MembersWeightedByClassOrBySampleTrainAsAlone) {
  const DataSplit data = make_synthetic(teacher(4, full_or_small(200, 100)));
  const ClassWeights by_class{{0, 2.f}, {1, 0.25f}, {3, 1.5f}};
  Dataset class_weighted = data.train;
  weigh_by_class(class_weighted, by_class);
  Dataset sample_weighted = data.train;
  std::vector<float> weights;
  for (int64_t r = 0; r < data.train.rows; ++r) weights.push_back(float(r % 5) * 0.5f);
  sample_weighted.y = with_weight_column(data.train.y, 1, weights);
  sample_weighted.weights = RowWeights::sample;
  std::vector<ModelSpec> by_class_specs = {deep_classifier(1, 1e-2f), deep_classifier(2, 3e-3f)};
  std::vector<ModelSpec> by_sample_specs = by_class_specs;
  for (ModelSpec& spec : by_class_specs) spec.fit.class_weight = by_class;
  for (ModelSpec& spec : by_sample_specs) spec.fit.sample_weight = true;
  on_every_backend([&](Backend& b) {
    expect_pack_equals_alone(b, by_class_specs, class_weighted);
    expect_pack_equals_alone(b, by_sample_specs, sample_weighted);
  });
}

// An independent reference for the weights' arithmetic: SGD on rows all weighing 2 takes the steps
// of SGD at twice the rate on the unweighted rows (scaling by 2 is exact in floats), and its loss
// and val_loss are twice theirs, its accuracy theirs; rows all weighing 1 change nothing at all.
TEST(PackTraining, WeightsOfTwoAreTwiceTheRateAndTheLossForSgd) {
  const DataSplit data = make_synthetic(teacher(4));
  ModelSpec plain = deep_classifier(5, 1e-2f);
  plain.optimizer.kind = OptimizerKind::sgd;
  ModelSpec weighted = plain, doubled = plain;
  weighted.fit.sample_weight = true;
  doubled.optimizer.learning_rate = 2e-2f;
  for (const float w : {1.f, 2.f}) {
    SCOPED_TRACE("every weight " + std::to_string(w));
    Dataset rows = data.train;
    rows.y = with_weight_column(data.train.y, 1, std::vector<float>(size_t(rows.rows), w));
    rows.weights = RowWeights::sample;
    CpuBackend cpu;
    const Trained got = train_alone(cpu, weighted, rows);
    const Trained want = train_alone(cpu, w == 1.f ? plain : doubled, data.train);
    const Trained unscaled = train_alone(cpu, plain, data.train);
    EXPECT_TRUE(got.params == want.params) << "the final weights differ";
    ASSERT_EQ(got.fit.epochs.size(), want.fit.epochs.size());
    for (size_t e = 0; e < got.fit.epochs.size(); ++e) {
      // Epoch e's loss is over the steps from the same weights as the rate-scaled run's.
      const EpochMetrics &g = got.fit.epochs[e], &rate = want.fit.epochs[e];
      expect_same_bits(double(w) * rate.loss, g.loss, "loss");
      expect_same_bits(double(w) * rate.val_loss, g.val_loss, "val_loss");
      expect_same_bits(rate.accuracy, g.accuracy, "accuracy");
    }
    expect_same_bits(double(w) * want.test.loss, got.test.loss, "test loss");
    if (w == 1.f) {
      EXPECT_TRUE(got.params == unscaled.params);
    }
  }
}

}  // namespace
}  // namespace mf::test
