// Kernel launches per training step, counted under host execution (the same launch{} calls a GPU
// gets). A tiny model's step costs its launches (about 2 µs each on a GPU) more than its
// arithmetic, so a change in these counts is a change in the GPU's fixed cost of a step: the counts
// are pinned here, and an issue that folds kernels together lowers them on purpose.
#include <gtest/gtest.h>

#include "backends/cuda/cuda_backend.h"
#include "data/dataset.h"
#include "target/target.h"
#include "nn/device_data.h"
#include "nn/epoch_iterator.h"
#include "nn/model.h"
#include "tests/parity/test_sizes.h"

namespace mf {
namespace {

// Launches of one training step (the batch, then forward, loss, backward, optimizer), after the
// epoch's shuffle, as fit makes it, of a model or of a pack of `members` copies of it.
int64_t launches_per_step(const ModelSpec& spec, const Dataset& data, int members = 1) {
  auto backend = hostexec::make_cuda_backend({});
  DeviceData resident(*backend, data);
  std::vector<ModelSpec> specs;
  for (int z = 0; z < members; ++z) specs.push_back(spec), specs.back().seed = uint64_t(z);
  Model model(specs, *backend);
  EpochIterator batches(model, resident, resident.rows());
  batches.begin_epoch(0);
  const int64_t before = hostexec::kernel_launches().load();
  const EpochIterator::Batch batch = batches.batch(0);
  model.train_batch(batch.x, batch.y, batch.size, batch.rows, batch.stride);
  return hostexec::kernel_launches().load() - before;
}

Dataset rows_of(int rows, int features, int classes) {
  Dataset d;
  d.rows = rows;
  d.features = features;
  d.classes = classes;
  d.x.assign(size_t(rows) * features, 0.5f);
  for (int r = 0; r < rows; ++r) d.y.push_back(float(r % classes));
  return d;
}

ModelSpec mlp(int input, std::vector<LayerSpec> layers, Loss loss, int batch) {
  ModelSpec spec;
  spec.input = input;
  spec.layers = std::move(layers);
  spec.loss = loss;
  spec.fit.batch_size = batch;
  return spec;
}

TEST(LaunchCount, TheSeedsTinyModel) {
  // Dense(64, relu) -> Dense(1, sigmoid), batch 64: no gather (the first layer and the loss read
  // the batch's rows by index), forward (2), the loss with the metrics (1), backward: the output
  // layer's weights with its bias (1), the hidden layer's output gradient through relu's backward
  // (1), the hidden layer's weights with its bias (1), Adam (1). It was 13 while the gathers, the
  // metrics, each bias gradient and activation backward had launches of their own.
  const ModelSpec spec =
      mlp(20, {{64, Activation::relu}, {1, Activation::sigmoid}}, Loss::binary_crossentropy, 64);
  EXPECT_EQ(launches_per_step(spec, rows_of(128, 20, 2)), 7);
}

TEST(LaunchCount, APackOfTheSeedsTinyModelTakesOneModelsLaunches) {
  // 32 tiny models in packed mode (8 at the small sizes, tests/parity/test_sizes.h): the same 7
  // launches, each over all 32 (224 in serial or streams).
  const ModelSpec spec =
      mlp(20, {{64, Activation::relu}, {1, Activation::sigmoid}}, Loss::binary_crossentropy, 64);
  EXPECT_EQ(launches_per_step(spec, rows_of(128, 20, 2), test::full_or_small(32, 8)), 7);
}

TEST(LaunchCount, TheFashionMnistMlp) {
  // 784-256-128-10: three more for the middle layer: its forward, its weights with its bias, and
  // one more output gradient through its relu (it was 18): 10. Then split-K (kernels/gemm_plan.h,
  // at host execution's 132 SMs) adds a sum pass to the four products of batch 32 with few tiles
  // and a K of 128 or more: the three forwards (S = 8, 4, 2) and the middle layer's output gradient
  // dX(32,256), K = 128 (S = 2).
  const ModelSpec spec =
      mlp(784, {{256, Activation::relu}, {128, Activation::relu}, {10, Activation::softmax}},
          Loss::sparse_categorical_crossentropy, 32);
  EXPECT_EQ(launches_per_step(spec, rows_of(64, 784, 10)), 14);
}

}  // namespace
}  // namespace mf
