#include "nn/epoch_iterator.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace mf {
namespace {

size_t x_bytes(const ModelSpec& spec) { return size_t(spec.fit.batch_size) * spec.input * sizeof(float); }
size_t y_bytes(const ModelSpec& spec) {
  return size_t(spec.fit.batch_size) * target_cols(spec.loss, spec.outputs()) * sizeof(float);
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

EpochIterator::EpochIterator(Model& model, const DeviceData& data, int64_t rows)
    : model_(model), data_(data), rows_(rows), batch_size_(model.spec().fit.batch_size),
      stride_(int64_t(plan(model.spec(), rows).total())) {
  const ModelSpec& spec = model.spec();
  buffers_ = model.pool().allocate(size_t(stride_) * size_t(model.members()));
  std::byte* at = static_cast<std::byte*>(buffers_);
  x_ = reinterpret_cast<float*>(at);
  y_ = reinterpret_cast<float*>(at += MemoryPool::aligned(x_bytes(spec)));
  order_ = reinterpret_cast<int*>(at += MemoryPool::aligned(y_bytes(spec)));
  if (!spec.fit.shuffle) {  // the identity order, once
    std::vector<int> identity(static_cast<size_t>(rows));
    std::iota(identity.begin(), identity.end(), 0);
    for (int z = 0; z < model.members(); ++z)
      model.backend().to_device(member(order_, z, stride_), identity.data(), identity.size() * sizeof(int));
  }
}

EpochIterator::~EpochIterator() { model_.pool().deallocate(buffers_); }

void EpochIterator::begin_epoch(int epoch) {
  model_.start_epoch();
  if (!model_.spec().fit.shuffle) return;
  Pack layout = model_.pack();
  layout.rows_stride = stride_;
  model_.backend().shuffle(order_, int(rows_), model_.settings(), epoch, layout);
}

EpochIterator::Batch EpochIterator::batch(int64_t step) {
  const int m = rows(step);
  // Where the batch starts in the order is the model's step state (first_row), not an argument: a
  // step's calls are then the same every step.
  Backend& backend = model_.backend();
  if (backend.fuses_gather()) return {data_.x(), data_.y(), m, order_, stride_};  // read by index where used
  Pack layout = model_.pack();
  layout.data_stride = layout.rows_stride = stride_;
  backend.gather(data_.x(), data_.features(), order_, m, x_, layout);
  backend.gather(data_.y(), data_.target_cols(), order_, m, y_, layout);
  return {x_, y_, m, nullptr, stride_};
}

}  // namespace mf
