#include "nn/input_pipeline.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <utility>

#include "runtime/clock.h"

namespace mf {

InputPipeline::InputPipeline(std::vector<const ModelSpec*> members, Rows rows, Backend& backend,
                             bool timeline)
    : members_(std::move(members)),
      rows_(rows),
      batch_size_(members_.front()->fit.batch_size),
      timeline_(timeline) {
  const PipelineSpec& settings = members_.front()->pipeline;
  const size_t x_floats = size_t(batch_size_) * members_.size() * size_t(rows_.features);
  const size_t y_floats = size_t(batch_size_) * members_.size() * size_t(rows_.y_cols);
  slots_.resize(size_t(settings.prefetch));
  for (Slot& slot : slots_) {
    slot.memory = backend.host_buffer((x_floats + y_floats) * sizeof(float));
    slot.x = static_cast<float*>(slot.memory->data());
    slot.y = slot.x + x_floats;
    slot.uploaded = backend.fence();
  }
  try {
    for (int i = 0; i < settings.workers; ++i) threads_.emplace_back([this] { work(); });
  } catch (...) {
    stop();  // no thread left to start (std::system_error): no destructor stops those started
    throw;
  }
}

InputPipeline::~InputPipeline() {
  stop();
  // No copy reads a slot once it is freed. A fence that cannot be waited for is the device's error
  // (a poisoned context's, sticky: its copies will never run), which the training loop has met or
  // will meet on its own stream; a destructor, which may run while that error unwinds, must not
  // throw it again.
  for (Slot& slot : slots_) {
    try {
      slot.uploaded->wait();
    } catch (...) {  // given up, as said above
    }
  }
}

void InputPipeline::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  slot_free_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void InputPipeline::begin_epoch(int epoch, std::vector<std::vector<int>> orders,
                                int64_t train_rows) {
  {
    std::unique_lock lock(mutex_);
    batch_ready_.wait(lock, [&] { return in_flight_ == 0; });
    if (error_) std::rethrow_exception(error_);
    orders_ = std::move(orders);
    epoch_ = epoch;
    train_rows_ = train_rows;
    steps_ = (train_rows + batch_size_ - 1) / batch_size_;
    next_ = released_ = 0;
    times_ = {};
    spans_.clear();  // a warm-up's batches are not the epoch's
    for (Slot& slot : slots_) slot.ready = false;
  }
  slot_free_.notify_all();
}

void InputPipeline::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    const int64_t prefetch = int64_t(slots_.size());
    slot_free_.wait(lock, [&] {
      return stopping_ || error_ || (next_ < steps_ && next_ < released_ + prefetch);
    });
    if (stopping_ || error_) return;
    const int64_t step = next_++;
    Slot& slot = slots_[size_t(step % prefetch)];
    ++in_flight_;
    lock.unlock();
    Interval span{};
    double busy = 0;
    std::exception_ptr error;
    try {  // an exception must not leave the thread (std::terminate): the loop gets it (take)
      slot.uploaded->wait();  // the last upload from the slot has read it
      const Clock::time_point start = Clock::now();
      if (timeline_) span.begin_s = clock_seconds();
      prepare(step, slot.x, slot.y);
      busy = seconds_since(start);
      if (timeline_) span.end_s = clock_seconds();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    --in_flight_;
    if (error) {  // the first error stops every worker; take() and begin_epoch() rethrow it
      if (!error_) error_ = error;
      slot_free_.notify_all();
      batch_ready_.notify_all();
      return;
    }
    times_.busy_s += busy;
    if (timeline_) spans_.push_back(span);
    slot.step = step;
    slot.ready = true;
    batch_ready_.notify_all();
  }
}

InputPipeline::Batch InputPipeline::take(int64_t step) {
  Slot& slot = slots_[size_t(step % int64_t(slots_.size()))];
  std::unique_lock lock(mutex_);
  const auto ready = [&] { return error_ || (slot.ready && slot.step == step); };
  if (!ready()) {
    const Clock::time_point start = Clock::now();
    batch_ready_.wait(lock, ready);
    times_.wait_s += seconds_since(start);
  }
  if (error_) std::rethrow_exception(error_);
  return {slot.x, slot.y};
}

void InputPipeline::release(int64_t step) {
  Slot& slot = slots_[size_t(step % int64_t(slots_.size()))];
  slot.uploaded->record();  // before a worker may take the slot: it waits for this
  {
    std::lock_guard lock(mutex_);
    slot.ready = false;
    released_ = step + 1;
  }
  slot_free_.notify_all();
}

void InputPipeline::prepare_now(int64_t step, float* x, float* y) const { prepare(step, x, y); }

InputPipeline::Times InputPipeline::take_times() {
  std::lock_guard lock(mutex_);
  return std::exchange(times_, {});
}

Track InputPipeline::take_spans() {
  std::lock_guard lock(mutex_);
  return std::exchange(spans_, {});
}

void InputPipeline::prepare(int64_t step, float* x, float* y) const {
  const int64_t first = step * batch_size_;
  const int m = int(std::min<int64_t>(batch_size_, train_rows_ - first));
  const size_t features = size_t(rows_.features), targets = size_t(rows_.y_cols);
  for (size_t z = 0; z < members_.size(); ++z) {
    float* member_x = x + z * size_t(batch_size_) * features;
    float* member_y = y + z * size_t(batch_size_) * targets;
    const std::vector<int>& order = orders_[z];
    for (int i = 0; i < m; ++i) {
      const size_t row = size_t(order[size_t(first + i)]);
      std::memcpy(member_x + size_t(i) * features, rows_.x + row * features,
                  features * sizeof(float));
      std::memcpy(member_y + size_t(i) * targets, rows_.y + row * targets, targets * sizeof(float));
    }
    const ModelSpec& spec = *members_[z];
    spec.preprocessing.apply(member_x, member_x, m, rows_.features, spec.seed, epoch_, first);
  }
}

}  // namespace mf
