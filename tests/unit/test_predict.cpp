// predict (Keras's Model.predict), a model's fit settings changed between fits (Model::set_fit),
// and rows borrowed from their owner (DeviceData of HostRows), against hand-computed references:
// the outputs of a one-layer model from its weights, evaluate's loss from predict's outputs, and a
// fit in two parts against one fit.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.h"
#include "data/dataset.h"
#include "nn/fit.h"
#include "test_support.h"

namespace mf {
namespace {

using test::mlp;

ModelSpec softmax_classifier(int batch) {
  ModelSpec spec = mlp(3, {{4, Activation::softmax}}, Loss::sparse_categorical_crossentropy, "p");
  spec.fit.batch_size = batch;
  spec.seed = 3;
  return spec;
}

TEST(Predict, IsTheOutputLayersSoftmaxOfItsWeights) {
  // 5 rows in batches of 2 (the last partial): each row's softmax(x W + b), computed here in
  // double.
  const ModelSpec spec = softmax_classifier(2);
  CpuBackend cpu;
  Model model(spec, cpu);
  const std::vector<float> x = {0.5f, -1, 2, 1, 0, -0.5f, 0, 0, 0, 3, 1, 1, -2, 0.25f, 0.75f};
  const HostRows rows{5, 3, 1, x.data(), nullptr};
  const DeviceData data(cpu, rows);
  const std::vector<float> out = predict(model, data, 0, 5);
  const std::vector<float> w = model.get_weights();  // kernel (3, 4) row-major, then bias (4)
  ASSERT_EQ(out.size(), 20u);
  for (int r = 0; r < 5; ++r) {
    double z[4], sum = 0;
    for (int j = 0; j < 4; ++j) {
      z[j] = w[12 + j];
      for (int i = 0; i < 3; ++i) z[j] += double(x[r * 3 + i]) * w[i * 4 + j];
      sum += std::exp(z[j]);
    }
    for (int j = 0; j < 4; ++j)
      EXPECT_NEAR(out[r * 4 + j], std::exp(z[j]) / sum, 1e-6) << r << "," << j;
  }
}

TEST(Predict, ItsOutputsGiveEvaluatesLoss) {
  const DataSplit split = make_synthetic("teacher:rows=50,features=3,classes=4,seed=1");
  CpuBackend cpu;
  const DeviceData data(cpu, split.train);
  Model model(softmax_classifier(8), cpu);
  const std::vector<float> out = predict(model, data, 0, 50);
  double loss = 0;
  for (int r = 0; r < 50; ++r) loss -= std::log(double(out[r * 4 + int(split.train.y[r])]));
  EXPECT_NEAR(evaluate(model, data, 0, 50).loss, loss / 50, 1e-5);
}

TEST(Predict, SigmoidOutputsAreProbabilities) {
  ModelSpec spec = mlp(3, {{1, Activation::sigmoid}}, Loss::binary_crossentropy, "b");
  CpuBackend cpu;
  Model model(spec, cpu);
  const std::vector<float> x = {1, 2, 3, -1, -2, -3};
  const DeviceData data(cpu, HostRows{2, 3, 1, x.data(), nullptr});
  const std::vector<float> out = predict(model, data, 0, 2), w = model.get_weights();
  for (int r = 0; r < 2; ++r) {
    double z = w[3];
    for (int i = 0; i < 3; ++i) z += double(x[r * 3 + i]) * w[i];
    EXPECT_NEAR(out[r], 1 / (1 + std::exp(-z)), 1e-6);
  }
}

TEST(HostRows, AreBorrowedOnAHostAddressableBackend) {
  const std::vector<float> x = {1, 2, 3, 4}, y = {0, 1};
  CpuBackend cpu;
  const DeviceData data(cpu, HostRows{2, 2, 1, x.data(), y.data()});
  EXPECT_EQ(data.x(), x.data());
  EXPECT_EQ(data.y(), y.data());
  EXPECT_EQ(data.bytes(), 6 * sizeof(float));
}

TEST(SetFit, TwoFitsOfOneEpochAreOneFitOfTwoButForTheShuffle) {
  // Without shuffling, epoch 2 of one fit and the second fit's epoch 1 train on the same batches in
  // the same order, from the same weights and optimizer state: the same numbers, bit for bit.
  const DataSplit split = make_synthetic("teacher:rows=40,features=3,classes=4,seed=2");
  CpuBackend cpu;
  const DeviceData data(cpu, split.train);
  ModelSpec spec = softmax_classifier(8);
  spec.fit.shuffle = false;
  spec.fit.epochs = 2;
  Model once(spec, cpu);
  const FitResult two = fit(once, data, {});
  spec.fit.epochs = 1;
  Model twice(spec, cpu);
  fit(twice, data, {});
  FitSpec next = spec.fit;
  twice.set_fit(next);
  const FitResult second = fit(twice, data, {});
  EXPECT_EQ(second.epochs[0].loss, two.epochs[1].loss);
  EXPECT_EQ(twice.get_weights(), once.get_weights());
  next.batch_size = 4;
  EXPECT_THROW(twice.set_fit(next), std::invalid_argument);
}

}  // namespace
}  // namespace mf
