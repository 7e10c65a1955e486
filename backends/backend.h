#pragma once
// The operations a dense network needs, on one backend's memory. Pointers are
// that backend's memory (host memory for cpu and host-exec, device memory for
// cuda); matrices are row-major float32 with their shapes in the comments. Every
// call is queued on the backend's stream (on the cpu, and under host execution
// outside a capture, it has run when it returns); those that wait for queued work
// say so: to_host(), to_host_strided(), synchronize(), take_marks(), fault().
//
// Every training operation serves a pack (kernels/pack.h): `pack.count` same-shape models in one
// call, member z's buffers at member(p, z, stride) of member 0's. X of the first layer and the
// loss's targets are input data, at pack.data_stride (0: the data set itself, read by every
// member); the row indices (`rows`: each member's epoch order) are at pack.rows_stride; every other
// buffer is the model's own, at pack.stride. Shapes are a member's. The default, a pack of one, is
// one model.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/element_math.h"
#include "kernels/layer_math.h"
#include "kernels/loss_row.h"
#include "kernels/member_settings.h"
#include "kernels/pack.h"
#include "kernels/param_tensors.h"
#include "runtime/bytes.h"
#include "runtime/error.h"
#include "runtime/memory_pool.h"

namespace mf {

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;    // "cpu", "cuda", "host-exec"
  virtual std::string device() const = 0;  // the processor it runs on, in words
  virtual Upstream& upstream() = 0;        // where pools and data sets take their memory
  // The host threads a model's (or pack's) operations run on: the cpu backend's; 0 where a device
  // runs them.
  virtual int host_threads() const { return 0; }
  // Leaves `threads` of the host threads this backend was made with to other work (the next model's
  // input pipeline workers, nn/input_pipeline.h) until the next call: the cpu backend's operations
  // then use host_threads() = its threads less these, at least 1. Nothing where a device computes.
  // Before a model is made: its recorded steps keep the count they were recorded with.
  virtual void reserve_host_threads(int threads) { (void)threads; }
  // Whether the host reads this backend's memory directly (the cpu backend's is host memory): a
  // resident data set is then the input pipeline's source (nn/input_pipeline.h).
  virtual bool host_addressable() const { return false; }

  // to_device reads `src` before it returns, unless `src` is a host_buffer() of this backend: then
  // the copy reads it while the host goes on (on the cuda backend an asynchronous DMA), and it may
  // be written again once a fence recorded after the copy has been waited for.
  virtual void to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void to_host(void* dst, const void* src, size_t bytes) = 0;  // waits for queued work
  virtual void zero(void* dst, size_t bytes) = 0;
  // The same for `rows` blocks of `width` bytes, `pitch` bytes apart (each member's copy of a value
  // in a pack: one call for all); to_host_strided packs them `dst_pitch` apart on the host and
  // waits.
  virtual void to_host_strided(void* dst, size_t dst_pitch, const void* src, size_t pitch,
                               size_t width, size_t rows) = 0;
  virtual void zero_strided(void* dst, size_t pitch, size_t width, size_t rows) = 0;
  virtual void synchronize() = 0;

  // Host memory that uploads read asynchronously (the input pipeline's ring slots): page-locked on
  // the cuda backend (cudaMallocHost), plain memory where calls return finished. Throws OutOfMemory
  // when the host has none left.
  class HostBuffer {
   public:
    virtual ~HostBuffer() = default;
    virtual void* data() = 0;
  };
  virtual std::unique_ptr<HostBuffer> host_buffer(size_t bytes) {
    struct Plain final : HostBuffer {
      explicit Plain(size_t bytes) : memory(bytes) {}
      void* data() override { return memory.data(); }
      std::vector<std::byte> memory;
    };
    try {
      return std::make_unique<Plain>(bytes);
    } catch (const std::bad_alloc&) {
      throw OutOfMemory("the host cannot give " + format_bytes_exact(bytes) +
                        " for an input pipeline's ring slot");
    }
  }

  // A point in the stream's queue that a host thread can wait for (a CUDA event): record() marks
  // the work queued so far, wait() returns once that work has finished, without waiting for what
  // was queued after it, from any host thread. Before its first record(), wait() returns at once.
  // Where calls return finished (the cpu, host execution), both do nothing.
  class Fence {
   public:
    virtual ~Fence() = default;
    virtual void record() {}
    virtual void wait() {}
  };
  virtual std::unique_ptr<Fence> fence() { return std::make_unique<Fence>(); }

  // Timestamps of training steps, for the models' overlap and the trace: mark() notes the moment
  // the work queued so far has finished (an event on the stream; on the cpu, whose calls return
  // finished, the clock at once). take_marks() waits for the marks since the last take and returns
  // their times in order, in seconds of clock_seconds() (runtime/clock.h).
  virtual void mark() = 0;
  virtual std::vector<double> take_marks() = 0;

  // How a host thread waits for this backend's device, by CUDA's scheduling flag: "blocking_sync"
  // (the cuda backend sets it: its waits sleep rather than spin on the cores that models share),
  // "spin", "yield" or "auto"; "" where calls return finished (the cpu).
  virtual std::string device_schedule() const { return ""; }

  // "" while the backend works; else why it cannot any more: on a GPU, the sticky error of a device
  // fault (an illegal address, say), which poisons every stream of the process's CUDA context.
  // Waits for this backend's queued work.
  virtual std::string fault() = 0;
  // A real fault, on purpose (run --inject-fault): what a stray pointer does where this backend
  // computes. The cpu raises SIGSEGV on the calling thread, and the process ends as a bad write
  // would end it; on a GPU a kernel on this stream writes to address 0, an illegal address: the
  // context's sticky error, which fault() then returns and every later call on the context throws
  // (CudaError).
  virtual void inject_fault() = 0;

  // A training step recorded as a CUDA graph, launched (queued) as often as needed: every launch
  // does what the recorded calls do, with the arguments they had. fit keeps one per batch row count
  // (an epoch's shorter last batch has its own).
  struct StepGraph {
    virtual ~StepGraph() = default;
    virtual void launch() = 0;
    // `times` launches in a row, nothing between them (every step's batch is found by the step's
    // own state: StepState::first_row). Where runs_members_apart(), each pack member's `times`
    // steps run before the next member's.
    virtual void launch_times(int times) {
      for (int i = 0; i < times; ++i) launch();
    }
  };
  // Whether StepGraph::launch_times runs a pack's members apart, each its steps in turn: the cpu
  // backend's, where a member's buffers then stay in its core's cache from step to step, so that
  // fit launches a pack's steps in runs. Elsewhere a run is only its launches one by one.
  virtual bool runs_members_apart() const { return false; }
  // Whether a fit's warm-up before the start barrier (nn/fit.h's PackFit::warm_up) keeps work out
  // of its training time: a CUDA device loads a kernel's module at its first launch, and the fit
  // instantiates its step graphs there. The cpu backend loads nothing and records a step graph in
  // microseconds, while the warm-up's snapshot of every member's arena would cost more than it
  // saves (a pack of 512 tiny models: 33 ms of its 52 ms warm-up, more than its first epoch).
  virtual bool warm_up_pays() const { return true; }
  // Whether capture() works here: on the cuda backend (real graphs) and host-exec (emulated) with
  // our kernels; not on the cpu, not with MULTIFIT_SYNC_LAUNCHES=1 or the cuBLAS and cuDNN paths.
  virtual bool has_graphs() const { return false; }
  // Records the calls `step` makes into a graph, running none of them; they must be the same every
  // step (what changes from step to step is in the model's memory: StepState, kernels/pack.h).
  virtual std::unique_ptr<StepGraph> capture(const std::function<void()>& step) {
    (void)step;
    throw std::logic_error("this backend has no CUDA graphs");
  }

  // Runs the calls `calls` makes as one piece of work: the cpu backend records them and replays
  // them once (a pack's members each run all of them in turn, over its threads: an evaluation pass
  // from each member's own cache); elsewhere they are queued as they come. The calls must be
  // training operations, as in capture(), but may differ from one another (each batch its own
  // rows).
  virtual void run_together(const std::function<void()>& calls) { calls(); }

  // Whether the first layer's products and the loss pass can read a batch straight from the data
  // set by row index (`rows` below), so that the batch needs no gather of its own.
  virtual bool fuses_gather() const { return false; }

  // ---- Dense ----
  // Y(m,n) = act(X(m,k) · W(k,n) + b(n)); act is element-wise (not softmax); b null: no bias. With
  // Z, also Z(m,n) = X · W + b, the pre-activation (kept for the activations that need it,
  // needs_pre_activation). With rows (only where fuses_gather()), X is the data set and the layer's
  // input is the data set's rows rows[f..f+m), f = first_row(pack).
  virtual void dense_forward(const float* X, const float* W, const float* b, float* Y, float* Z,
                             int m, int k, int n, Activation act, const int* rows = nullptr,
                             const Pack& pack = {}) = 0;
  // dX(m,k) = dZ(m,n) · W(k,n)ᵀ, then through `below` (the gradient at the pre-activation of the
  // layer below, from its output: the tiled kernels do both in one launch). No input data here.
  virtual void dense_backward_input(const float* dZ, const float* W, float* dX, int m, int k, int n,
                                    const Through& below = {}, const Pack& pack = {}) = 0;
  // dW(k,n) = X(m,k)ᵀ · dZ(m,n);  db(n) = column sums of dZ (db null: no bias); rows as for
  // dense_forward.
  virtual void dense_backward_params(const float* X, const float* dZ, float* dW, float* db, int m,
                                     int k, int n, const int* rows = nullptr,
                                     const Pack& pack = {}) = 0;

  // ---- Element-wise layers ----
  // Y(count) = act(X): an Activation layer.
  virtual void activation_forward(const float* X, float* Y, int64_t count, Activation act,
                                  const Pack& pack = {}) = 0;
  // dX = dY ⊙ own' then through `below`: an Activation layer's backward (own: its activation,
  // output and input), or an output's through its own activation (below: none). dX may alias dY.
  virtual void activation_backward(const float* dY, float* dX, int64_t count, const Through& own,
                                   const Through& below = {}, const Pack& pack = {}) = 0;
  // Dropout of X(m,n) into Y(m,n) for the spec's layer `layer` (kernels/layer_math.h: the mask from
  // each member's seed and step count, its rate from its LayerSettings), training only: inference
  // reads X as it is. Needs pack.step.
  virtual void dropout_forward(const float* X, float* Y, int m, int n, int layer,
                               const MemberSettings* settings, const LayerSettings* layers,
                               const Pack& pack) = 0;
  // dX = dY ⊙ the same mask and scale, then through `below`; dX may alias dY. Needs pack.step.
  virtual void dropout_backward(const float* dY, float* dX, int m, int n, int layer,
                                const MemberSettings* settings, const LayerSettings* layers,
                                const Through& below, const Pack& pack) = 0;

  // ---- BatchNormalization ----
  // Y(m,n) = batch normalization of X (kernels/layer_math.h): in training with the batch's column
  // statistics, which it keeps for backward (bn.mean, bn.inverse) and folds into the moving ones;
  // in inference with the moving ones.
  virtual void batch_norm_forward(const float* X, float* Y, int m, int n,
                                  const BatchNormBuffers& bn, const LayerSettings* layers,
                                  bool training, const Pack& pack = {}) = 0;
  // From the training forward's statistics: dgamma(n), dbeta(n) (where the layer has them) and
  // dX(m,n) through `below` (dX null: none is needed; dX may alias dY).
  virtual void batch_norm_backward(const float* X, const float* dY, float* dX, int m, int n,
                                   const BatchNormBuffers& bn, const Through& below,
                                   const Pack& pack = {}) = 0;

  // ---- Activity regularizers ----
  // partials(blocks) = each kParamBlock elements' sum of l1 |y| + l2 y^2 over Y(m,n), the layer's
  // activity regularizer (kernels/param_tensors.h's blocks; those past m * n hold 0): its penalty
  // on the batch's loss times m.
  virtual void activity_penalty(const float* Y, int m, int n, int layer,
                                const LayerSettings* layers, double* partials, int blocks,
                                const Pack& pack = {}) = 0;
  // dX = (dY + d(penalty / m)/dY) through `own`, the layer's activation from its output own.y
  // (Keras divides an activity penalty by the batch's rows); dX may alias dY.
  virtual void activity_backward(const float* dY, float* dX, int m, int n, int layer,
                                 const LayerSettings* layers, const Through& own,
                                 const Pack& pack = {}) = 0;

  // ---- Loss and metrics ----
  // One pass over out(m,n) and target(m, shape.target_stride()): each row's values(m,
  // shape.values()), its loss (times its weight, where the pass applies one) and then each metric's
  // (kernels/loss_row.h), and d_out(m,n) = d(mean batch loss)/d(out). Where the loss takes logits
  // (takes_logits) `out` holds them (sigmoid/softmax fused). Each member's loss settings are its
  // MemberSettings'.
  virtual void loss(const LossShape& shape, const float* out, const float* target, float* d_out,
                    float* values, int m, int n, const MemberSettings* settings,
                    const Pack& pack = {}) = 0;
  // totals[v] += Σ values(., v) for each of the `count` values, in a fixed order (deterministic);
  // with pack.step and pack.counts_step, counts the training step (StepState::t).
  virtual void accumulate(const float* values, int count, int m, double* totals,
                          const Pack& pack = {}) = 0;
  // bins[c] += the rows r < m whose values(r, column) is c (a whole number < bin_count): the
  // histogram of the rows' codes (AUC's buckets, kernels/loss_row.h), deterministic.
  virtual void count_codes(const float* values, int count, int column, int m, double* bins,
                           int bin_count, const Pack& pack = {}) = 0;
  // loss(), then accumulate(): what a training step does; a backend may fold the two together. With
  // rows (only where fuses_gather()), target is the data set's targets and the batch's are the
  // data set's rows rows[f..f+m), f = first_row(pack).
  virtual void loss_and_accumulate(const LossShape& shape, const float* out, const float* target,
                                   float* d_out, float* values, int m, int n, double* totals,
                                   const MemberSettings* settings, const int* rows = nullptr,
                                   const Pack& pack = {}) {
    if (rows)
      throw std::logic_error("this backend does not fuse the gather: pass it gathered targets");
    loss(shape, out, target, d_out, values, m, n, settings, pack);
    accumulate(values, shape.values(), m, totals, pack);
  }
  // totals[0] += m * Σ weight_partials + Σ activity_partials: the regularizers' penalties on the
  // batch's loss (their partial sums, kernels/param_tensors.h), into its sum of row losses.
  virtual void add_penalty(const double* weight_partials, int weight_blocks,
                           const double* activity_partials, int activity_blocks, int m,
                           double* totals, const Pack& pack = {}) = 0;

  // ---- The optimizer (kernels/param_tensors.h's OptimizerStep) ----
  // One step over the members' flat parameter buffers, each member with its own settings: the
  // regularizers' gradients added (and, with step.regularized, their penalty's partials written),
  // clipped (by step.norms where by norm), weight decay, the update; then each member's first_row
  // moves past its batch. Needs pack.step (the step count t).
  virtual void optimizer_step(const OptimizerStep& step, const Pack& pack) = 0;
  // step.norms: each tensor's L2 norm of its gradients (with their regularizers'), then the global
  // one, through step.norm_partials: what clipping by norm reads.
  virtual void gradient_norms(const OptimizerStep& step, const Pack& pack) = 0;
  // step.penalty's partials alone, from the weights as they are (an evaluation's penalty).
  virtual void weight_penalty(const OptimizerStep& step, const Pack& pack) = 0;

  // order(n) = the permutation of [0,n) for (the member's seed, epoch): permute_index of
  // element_math.h.
  virtual void shuffle(int* order, int n, const MemberSettings* settings, int epoch,
                       const Pack& pack = {}) = 0;
  // dst(m,cols) = src rows order[f..f+m), f = first_row(pack); src is the data set, dst each
  // member's batch (at data_stride).
  virtual void gather(const float* src, int cols, const int* order, int m, float* dst,
                      const Pack& pack = {}) = 0;
};

}  // namespace mf
