// A short training run on the CPU backend and on the CUDA backend from the same
// seed: every epoch's loss and accuracy, and the final weights, must match.
// Both run the same formulas in a different summation order, so the numbers
// drift apart by float rounding only: 1e-4 relative after 2 epochs.
#include "nn/fit.h"
#include "data/dataset.h"
#include "tests/parity/backend_pair.h"
#include "tests/parity/device_under_test.h"
#include "tests/parity/test_sizes.h"

namespace mf::test {
namespace {

ModelSpec small_classifier(Loss loss, Activation output, int outputs, OptimizerKind optimizer) {
  ModelSpec spec;
  spec.name = "parity";
  spec.input = 20;
  spec.layers = {{24, Activation::relu}, {16, Activation::tanh}, {outputs, output}};
  spec.loss = loss;
  spec.optimizer.kind = optimizer;
  spec.optimizer.learning_rate = optimizer == OptimizerKind::adam ? 1e-2f : 0.05f;
  spec.optimizer.momentum = optimizer == OptimizerKind::sgd ? 0.9f : 0.f;
  spec.fit = {2, 32, 0.25f, true};
  spec.seed = 7;
  spec.memory.limit_bytes = 1 << 20;
  return spec;
}

FitResult train(Backend& backend, const ModelSpec& spec, const Dataset& data,
                std::vector<float>& params) {
  DeviceData resident(backend, data);
  Model model(spec, backend);
  FitResult result = fit(model, resident, {});
  params = model.get_params();
  return result;
}

void expect_same_training(const ModelSpec& spec, const Dataset& data) {
  std::string why;
  std::unique_ptr<Backend> device = make_device_under_test(why);
  if (!device) GTEST_SKIP() << why;
  CpuBackend cpu;
  std::vector<float> cpu_params, device_params;
  const FitResult want = train(cpu, spec, data, cpu_params);
  const FitResult got = train(*device, spec, data, device_params);
  ASSERT_EQ(want.epochs.size(), got.epochs.size());
  for (size_t e = 0; e < want.epochs.size(); ++e) {
    EXPECT_NEAR(got.epochs[e].loss, want.epochs[e].loss, 1e-4 * want.epochs[e].loss)
        << "epoch " << e;
    EXPECT_NEAR(got.epochs[e].val_loss, want.epochs[e].val_loss, 1e-4 * want.epochs[e].val_loss);
    if (!std::isnan(want.epochs[e].accuracy)) {
      EXPECT_NEAR(got.epochs[e].accuracy, want.epochs[e].accuracy, 2.0 / double(data.rows));
    }
  }
  expect_close(cpu_params, device_params, 1e-3f, "trained parameters");
}

// 320 rows: 240 training rows, 7 batches of 32 and a last of 16 (at the small sizes,
// tests/parity/test_sizes.h, 100: 75, 2 and 11).
const int kRows = full_or_small(320, 100);

TEST(TrainingParity, SoftmaxClassifierWithAdam) {
  const DataSplit data = make_synthetic(teacher(4, kRows));
  expect_same_training(small_classifier(Loss::sparse_categorical_crossentropy, Activation::softmax,
                                        4, OptimizerKind::adam),
                       data.train);
}

TEST(TrainingParity, SigmoidClassifierWithSgdMomentum) {
  const DataSplit data = make_synthetic(teacher(2, kRows));
  expect_same_training(
      small_classifier(Loss::binary_crossentropy, Activation::sigmoid, 1, OptimizerKind::sgd),
      data.train);
}

TEST(TrainingParity, RegressionWithMse) {
  const DataSplit data = make_synthetic("regression:rows=" + std::to_string(kRows));
  expect_same_training(small_classifier(Loss::mse, Activation::sigmoid, 1, OptimizerKind::adam),
                       data.train);
}

}  // namespace
}  // namespace mf::test
