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
    : model_(model), data_(data), rows_(rows), batch_size_(model.spec().fit.batch_size) {
  MemoryPool& pool = model.pool();
  const ModelSpec& spec = model.spec();
  x_ = static_cast<float*>(pool.allocate(x_bytes(spec)));
  y_ = static_cast<float*>(pool.allocate(y_bytes(spec)));
  order_ = static_cast<int*>(pool.allocate(order_bytes(rows)));
  if (!spec.fit.shuffle) {  // the identity order, once
    std::vector<int> identity(static_cast<size_t>(rows));
    std::iota(identity.begin(), identity.end(), 0);
    model.backend().to_device(order_, identity.data(), identity.size() * sizeof(int));
  }
}

EpochIterator::~EpochIterator() {
  MemoryPool& pool = model_.pool();
  pool.deallocate(order_);
  pool.deallocate(y_);
  pool.deallocate(x_);
}

void EpochIterator::begin_epoch(int epoch) {
  const ModelSpec& spec = model_.spec();
  if (spec.fit.shuffle) model_.backend().shuffle(order_, int(rows_), spec.seed, epoch);
}

EpochIterator::Batch EpochIterator::batch(int64_t step) {
  const int64_t first = step * batch_size_;
  const int m = int(std::min<int64_t>(batch_size_, rows_ - first));
  Backend& backend = model_.backend();
  if (backend.fuses_gather()) return {data_.x(), data_.y(), m, order_ + first};  // read by index where used
  backend.gather(data_.x(), data_.features(), order_ + first, m, x_);
  backend.gather(data_.y(), data_.target_cols(), order_ + first, m, y_);
  return {x_, y_, m, nullptr};
}

}  // namespace mf
