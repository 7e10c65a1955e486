#include "nn/epoch_iterator.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace mf {
namespace {

size_t x_bytes(const ModelSpec& spec) {
  return size_t(spec.fit.batch_size) * spec.input * sizeof(float);
}
size_t y_bytes(const ModelSpec& spec) {
  return size_t(spec.fit.batch_size) * spec.y_cols() * sizeof(float);
}
size_t order_bytes(int64_t rows) { return size_t(rows) * sizeof(int); }

}  // namespace

// "batch x" and "batch y" serve backends that gather the batch (the cpu backend, the reference
// paths); they are planned on every backend, so that a memory limit means the same everywhere.
MemoryPlan EpochIterator::plan(const ModelSpec& spec, int64_t rows) {
  return {{{"batch x", MemoryPool::aligned(x_bytes(spec))},
           {"batch y", MemoryPool::aligned(y_bytes(spec))},
           {"shuffle order", MemoryPool::aligned(order_bytes(rows))}}};
}

EpochIterator::EpochIterator(Model& model, const DeviceData& data, int64_t rows, bool timeline)
    : model_(model),
      data_(data),
      rows_(rows),
      batch_size_(model.spec().fit.batch_size),
      stride_(int64_t(plan(model.spec(), rows).total())) {
  const ModelSpec& spec = model.spec();
  if (data.weights() != spec.row_weights())  // the batch's y buffer holds the spec's columns
    throw std::invalid_argument("EpochIterator: model '" + spec.name +
                                "' trains on data weighted otherwise than its fit settings say");
  buffers_ = model.pool().allocate(size_t(stride_) * size_t(model.members()));
  std::byte* at = static_cast<std::byte*>(buffers_);
  x_ = reinterpret_cast<float*>(at);
  y_ = reinterpret_cast<float*>(at += MemoryPool::aligned(x_bytes(spec)));
  order_ = reinterpret_cast<int*>(at += MemoryPool::aligned(y_bytes(spec)));
  if (!spec.fit.shuffle) {  // the identity order, once
    std::vector<int> identity(static_cast<size_t>(rows));
    std::iota(identity.begin(), identity.end(), 0);
    for (int z = 0; z < model.members(); ++z)
      model.backend().to_device(member(order_, z, stride_), identity.data(),
                                identity.size() * sizeof(int));
  }
  if (spec.preprocessing.empty()) return;
  if (!data.host_x())
    throw std::invalid_argument(
        "EpochIterator: a model with preprocessing needs a data set with host rows (DeviceData's keep_host_rows)");
  std::vector<const ModelSpec*> members;
  for (int z = 0; z < model.members(); ++z) members.push_back(&model.spec(z));
  pipeline_ = std::make_unique<InputPipeline>(
      members, InputPipeline::Rows{data.host_x(), data.host_y(), data.features(), data.y_cols()},
      model.backend(), timeline);
}

EpochIterator::~EpochIterator() { model_.pool().deallocate(buffers_); }

void EpochIterator::begin_epoch(int epoch) {
  model_.start_epoch();
  if (!model_.spec().fit.shuffle) return;
  Pack layout = model_.pack();
  layout.rows_stride = stride_;
  model_.backend().shuffle(order_, int(rows_), model_.settings(), epoch, layout);
  if (!pipeline_) return;
  std::vector<std::vector<int>> orders(size_t(model_.members()), std::vector<int>(size_t(rows_)));
  for (int z = 0; z < model_.members(); ++z)
    model_.backend().to_host(orders[size_t(z)].data(), member(order_, z, stride_),
                             size_t(rows_) * sizeof(int));
  pipeline_->begin_epoch(epoch, std::move(orders), rows_);
}

void EpochIterator::prepare(int64_t step, bool now) {
  if (!pipeline_) return;
  const size_t members = size_t(model_.members()), m = size_t(rows(step));
  const size_t features = size_t(data_.features()), targets = size_t(data_.y_cols());
  const size_t x_batch = size_t(batch_size_) * features, y_batch = size_t(batch_size_) * targets;
  std::vector<float> x, y;  // the warm-up's batch
  InputPipeline::Batch batch{};
  if (now) {
    x.resize(members * x_batch), y.resize(members * y_batch);
    pipeline_->prepare_now(step, x.data(), y.data());
    batch = {x.data(), y.data()};
  } else {
    batch = pipeline_->take(step);
  }
  Backend& backend = model_.backend();
  for (size_t z = 0; z < members; ++z) {
    backend.to_device(member(x_, int(z), stride_), batch.x + z * x_batch,
                      m * features * sizeof(float));
    backend.to_device(member(y_, int(z), stride_), batch.y + z * y_batch,
                      m * targets * sizeof(float));
  }
  if (!now) pipeline_->release(step);
}

EpochIterator::Batch EpochIterator::batch(int64_t step) {
  const int m = rows(step);
  // Where the batch starts in the order is the model's step state (first_row), not an argument: a
  // step's calls are then the same every step.
  Backend& backend = model_.backend();
  if (pipeline_) return {x_, y_, m, nullptr, stride_};  // prepare() copied it in
  // read by index where used
  if (model_.reads_by_index()) return {data_.x(), data_.y(), m, order_, stride_};
  Pack layout = model_.pack();
  layout.data_stride = layout.rows_stride = stride_;
  backend.gather(data_.x(), data_.features(), order_, m, x_, layout);
  backend.gather(data_.y(), data_.y_cols(), order_, m, y_, layout);
  return {x_, y_, m, nullptr, stride_};
}

}  // namespace mf
