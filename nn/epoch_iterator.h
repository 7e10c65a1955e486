#pragma once
// Keras's EpochIterator: the batches of one fit. It owns the epoch's row order
// (a new permutation every epoch from the seed and the epoch, made on the backend,
// or the rows in order) and the batch buffers, taken from the model's pool. Where
// the backend needs a gathered batch (the cpu backend, the cuBLAS and cuDNN paths)
// it gathers each batch from the device-resident data; where the model reads the
// rows by index (Model::reads_by_index) it hands over the data set and the order
// instead, and the batch buffers stay unused. Data flows one way:
// data -> batches -> model -> metrics.
// The trainer (fit) owns the epochs and the validation split. For a pack, every member has its own
// order (from its seed) and batch buffers, side by side in one allocation (Batch::stride apart).
// A model with preprocessing has its batches prepared on the host by its input pipeline
// (nn/input_pipeline.h) and uploaded into the batch buffers before each step (prepare), a copy
// queued on the model's stream from the pipeline's page-locked slots: the loop does not wait for
// it.
#include <algorithm>
#include <cstdint>
#include <memory>

#include "nn/device_data.h"
#include "nn/input_pipeline.h"
#include "nn/model.h"

namespace mf {

class EpochIterator {
 public:
  // rows: the training rows, the first rows of `data` (the validation rows follow them).
  // Takes its buffers from the model's pool; throws OutOfMemory when they do not fit. With
  // preprocessing, starts the model's input pipeline, which reads `data`'s host rows
  // (DeviceData::host_x; std::invalid_argument without them) and, with `timeline`, notes when it
  // prepared each batch (take_input_spans).
  EpochIterator(Model& model, const DeviceData& data, int64_t rows, bool timeline = false);
  ~EpochIterator();
  EpochIterator(const EpochIterator&) = delete;
  EpochIterator& operator=(const EpochIterator&) = delete;

  // The buffers it takes per member for a spec and a number of training rows: batch x, batch y,
  // shuffle order.
  static MemoryPlan plan(const ModelSpec& spec, int64_t rows);

  int64_t steps() const {
    return (rows_ + batch_size_ - 1) / batch_size_;
  }  // the last partial batch counts
  int rows(int64_t step) const {
    return int(std::min<int64_t>(batch_size_, rows_ - step * batch_size_));
  }
  // Every member's batches start again at row 0 of its order (Model::start_epoch); reshuffles when
  // the spec shuffles. With an input pipeline, hands it the epoch's orders (read back from the
  // backend) and the pipeline starts preparing.
  void begin_epoch(int epoch);

  // With an input pipeline, before the step's calls: waits for the step's batch and queues its copy
  // into the batch buffers (outside the step, so that a recorded step replays only the model's
  // calls; on the stream, so that the step reads it once copied). `now`: prepared on the calling
  // thread instead, out of the pipeline's order (the warm-up). Nothing to do without one.
  void prepare(int64_t step, bool now = false);
  bool pipelined() const { return pipeline_ != nullptr; }
  // The input pipeline's times since the last call (zero without one).
  InputPipeline::Times take_input_times() {
    return pipeline_ ? pipeline_->take_times() : InputPipeline::Times{};
  }
  Track take_input_spans() { return pipeline_ ? pipeline_->take_spans() : Track{}; }

  struct Batch {
    const float* x;   // (size, input); the whole data set when rows is set
    const float* y;   // (size, y columns: the targets, then a weight); the same
    int size;         // the batch's rows
    const int* rows;  // the epoch's orders, when the backend reads the batch by index
                      // (Model::reads_by_index), from the model's first_row on; else null and
                      // x and y are gathered
    int64_t stride;   // bytes between the members' batches: their row orders, or their x and y
  };
  // The step's rows of the epoch's order, gathered where the backend needs it. Steps come in order:
  // the model's step state says where the batch starts, and each train_batch moves it on.
  Batch batch(int64_t step);

 private:
  Model& model_;
  const DeviceData& data_;
  int64_t rows_;
  int batch_size_;
  int64_t stride_;  // one member's share: its plan's bytes
  void* buffers_ = nullptr;
  float *x_ = nullptr, *y_ = nullptr;
  int* order_ = nullptr;
  std::unique_ptr<InputPipeline> pipeline_;
};

}  // namespace mf
