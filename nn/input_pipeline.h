#pragma once
// The host input pipeline of a model with preprocessing (ModelSpec::pipeline, tf.data's
// num_parallel_calls and prefetch): `workers` host threads prepare the epoch's next batches (each
// member's rows gathered in its order, then its preprocessing) into `prefetch` ring slots while the
// training loop runs the current step.
//
// The ring: step s is prepared into slot s % prefetch, once step s - prefetch has been released, so
// at most `prefetch` batches are prepared ahead of the one the loop took last; workers take steps
// in order, several at once. A sample's result depends only on (its member's seed, the epoch, its
// position in the epoch's order), so the batches are the same whatever the number of workers and
// the depth of the ring.
//
// The slots are the backend's host buffers (Backend::host_buffer: page-locked on a GPU), so that an
// upload from one is an asynchronous copy on the model's stream: the training loop queues it and
// the step after it without waiting, and release() records a fence after them, which the worker
// that prepares the slot's next batch waits for before it writes the slot again. Nothing waits for
// the device but that worker, and only for the copy that read the slot.
//
// The times, per epoch (take_times): `wait_s`, how long take() waited for a batch not ready yet
// (the loop's input wait), and `busy_s`, the workers' time preparing batches, summed over workers.
//
// Errors: what a worker meets preparing a batch (the fence's wait: on a GPU, the CudaError of a
// context a fault poisoned; the preprocessing's) does not leave its thread. The first one stops
// every worker, and the training loop's next take() or begin_epoch() rethrows it as it was (its
// type and message): the pipeline prepares nothing more, and only its destructor is left to call.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "backends/backend.h"
#include "nn/spec.h"
#include "runtime/timeline.h"

namespace mf {

class InputPipeline {
 public:
  // The rows of every member's data set: x (rows, features) and y (rows, y_cols), host memory
  // the pipeline only reads, for the lifetime of the pipeline. `members` specs share their batch
  // size, input and pipeline settings (pack_key); each member's own seed and preprocessing apply.
  struct Rows {
    const float* x;
    const float* y;
    int features, y_cols;  // y_cols: the targets and the weight, where rows have one
  };
  // The slots are `backend`'s host buffers (OutOfMemory when they do not fit) with a fence each.
  // `timeline`: note when each batch was prepared (take_spans), on clock_seconds().
  InputPipeline(std::vector<const ModelSpec*> members, Rows rows, Backend& backend,
                bool timeline = false);
  // Stops the workers once the batches in preparation are done, then waits for the uploads. Never
  // throws: an upload that cannot be waited for (a poisoned context's) is not waited for.
  ~InputPipeline();
  InputPipeline(const InputPipeline&) = delete;
  InputPipeline& operator=(const InputPipeline&) = delete;

  // Starts an epoch of `steps` steps of batch_size rows (the last may be shorter; `train_rows` rows
  // in all): `orders[z]` is member z's order of the training rows. Waits for batches still in
  // preparation (an epoch stopped early), drops those prepared and zeroes the times and spans.
  // Throws the error a worker met, if one did (see Errors above).
  void begin_epoch(int epoch, std::vector<std::vector<int>> orders, int64_t train_rows);

  // Member z's batch of step `step`: x at x + z * batch_size * features, y likewise, in one of
  // `backend`'s host buffers; valid until release(step), which records the slot's fence: uploads
  // from it queued on the backend's stream before then may still read it. Steps are taken in order,
  // each once, each released before the next is taken. take() throws the error a worker met, if one
  // did, rather than wait for a batch no worker will prepare (see Errors above); release() throws
  // what the fence's record() throws (a CudaError).
  struct Batch {
    const float* x;
    const float* y;
  };
  Batch take(int64_t step);
  void release(int64_t step);

  // The same batch prepared on the calling thread into x and y (laid out as take's), outside the
  // ring and its times: the fit's warm-up. Between begin_epoch and the epoch's first take only.
  void prepare_now(int64_t step, float* x, float* y) const;

  struct Times {
    double wait_s = 0, busy_s = 0;
  };
  Times take_times();  // since begin_epoch or the last call, and zeroes them
  Track take_spans();  // with `timeline`: each batch's preparation since the last call, in the
                       // order they ended

  int workers() const { return int(threads_.size()); }

 private:
  struct Slot {
    std::unique_ptr<Backend::HostBuffer> memory;
    float *x = nullptr, *y = nullptr;          // in memory: the members' x, then their y
    std::unique_ptr<Backend::Fence> uploaded;  // recorded after the uploads that read it
    int64_t step = -1;                         // the step whose batch it holds, once ready
    bool ready = false;
  };

  void work();
  void stop();  // the workers, once their batches in preparation are done
  // reads orders_ and epoch_: fixed while in flight
  void prepare(int64_t step, float* x, float* y) const;

  const std::vector<const ModelSpec*> members_;
  const Rows rows_;
  const int batch_size_;
  std::vector<std::vector<int>> orders_;
  int epoch_ = 0;
  int64_t train_rows_ = 0, steps_ = 0;

  std::mutex mutex_;
  std::condition_variable slot_free_, batch_ready_;
  std::vector<Slot> slots_;
  int64_t next_ = 0;      // the next step a worker takes
  int64_t released_ = 0;  // steps released this epoch
  int in_flight_ = 0;     // batches being prepared
  bool stopping_ = false;
  std::exception_ptr error_;  // the first a worker met; set once, never cleared
  Times times_;
  const bool timeline_;
  Track spans_;
  std::vector<std::thread> threads_;
};

}  // namespace mf
