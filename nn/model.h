#pragma once
// A Sequential stack of Dense layers on one backend, or a pack of them: K members of the same shape
// (pack_key) trained in the same launches, each with its own weights, seed, data order and optimizer
// settings. All of its memory comes from one allocation in its own capped pool, carved into
// parameters, gradients, optimizer state and the buffers of one batch (llm.c style); the only other
// allocation is fit's batches (nn/epoch_iterator.h), from the same pool, before the first step. A pack's allocation is K copies of one member's plan side by side,
// member z's at z * the plan's bytes: every member's share is exactly its plan, and every kernel
// finds a member's buffers from member 0's (kernels/pack.h).
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "nn/spec.h"

namespace mf {

// One named buffer of a model's arena; bytes are aligned to the pool's alignment.
struct PlanPart {
  std::string name;  // "parameters", "layer 2 output", "shuffle order", ...
  size_t bytes = 0;
};

// The exact bytes a model needs for its batch size, as one table of named buffers in arena order (llm.c's parameter-size table): the plan
// is their sum, and the constructor carves the arena by walking the same table,
// so the two cannot disagree.
struct MemoryPlan {
  std::vector<PlanPart> parts;
  size_t total() const;
  size_t bytes_of(const std::string& name) const;  // 0 when there is no such part
  std::string describe() const;                    // "parameters 11.00 KiB, gradients 11.00 KiB, ..."
};

// Throws OutOfMemory, naming the model, every part and the cap, when `plan` is over the spec's limit.
void check_plan_fits(const ModelSpec& spec, const MemoryPlan& plan);

// What members of one pack share: input, layers (units, activations), loss, optimizer kind (and
// whether SGD keeps a velocity), batch size, epochs, validation split, shuffle, the pipeline's
// workers and prefetch, whether there is preprocessing (the members share one input pipeline) and
// memory mode. Two specs with the same key have the same plan and the same steps; they may differ in
// name, seed, learning rate, the optimizer's other settings and memory limit.
std::string pack_key(const ModelSpec& spec);

// The settings a member's kernels read: its seed and optimizer settings (Keras's float32 roundings).
MemberSettings member_settings(const ModelSpec& spec);

class Model {
 public:
  // One model. Throws OutOfMemory when the plan is over the spec's memory limit, before taking anything.
  Model(const ModelSpec& spec, Backend& backend);
  // A pack of members of one pack_key (std::invalid_argument otherwise, or when empty); its pool's cap
  // is the sum of theirs, and each member's plan is checked against its own limit (OutOfMemory).
  Model(std::vector<ModelSpec> specs, Backend& backend);
  ~Model();

  static MemoryPlan plan(const ModelSpec& spec);
  static int64_t param_count(const ModelSpec& spec);

  int members() const { return int(specs_.size()); }
  const ModelSpec& spec(int member = 0) const { return specs_[size_t(member)]; }
  Backend& backend() { return backend_; }
  int64_t param_count() const { return param_count(specs_[0]); }
  const PoolStats& pool_stats() const { return pool_.stats(); }
  // A member's share of the pool: its own cap; the pack's reserved and peak bytes over its members
  // (their plans are equal), or its cap where the pool reserves every cap (reserve mode).
  PoolStats member_share(int member) const;
  int target_cols() const;
  // The pack's layout for a training step's backend calls on the model's own buffers (data_stride =
  // stride: no data), with its step state.
  Pack pack() const { return {members(), stride_, stride_, 0, step_}; }

  // The model's pool: the arena of the plan, and what an EpochIterator takes for the batches.
  MemoryPool& pool() { return pool_; }
  // Each member's MemberSettings, in the model's memory (at pack().stride): what the shuffle reads.
  const MemberSettings* settings() const { return settings_; }

  // Forward, loss and backward on X(m, input), T(m, target_cols), m <= batch size, for every member:
  // leaves d(mean batch loss)/d(params) in the gradient buffers. X and T are
  // the data set, which every member reads, or the members' own batches `batch_stride` bytes apart.
  // With rows (only where the backend fuses_gather, `batch_stride` apart: the epoch's orders), X
  // and T are the data set and a member's batch is their rows rows[f..f+m), f its step state's
  // first_row (kernels/pack.h). A step's calls are the same every step: a CUDA graph can replay them.
  void compute_gradients(const float* X, const float* T, int m, const int* rows = nullptr,
                         int64_t batch_stride = 0) {
    gradients(X, T, m, rows, batch_stride, false);
  }
  // compute_gradients, counting the step, then one optimizer step, which moves first_row past the batch.
  void train_batch(const float* X, const float* T, int m, const int* rows = nullptr, int64_t batch_stride = 0);
  // An epoch's first batch starts at row 0 of its order (first_row = 0 for every member).
  void start_epoch();
  // Forward and loss only, every member on the same rows X(m, input), T(m, target_cols) of the data set.
  void evaluate_batch(const float* X, const float* T, int m);
  // Each member's sums of row losses and row accuracies since reset_totals(), in one copy; reading
  // waits on this model only.
  void reset_totals();
  std::vector<std::pair<double, double>> read_totals();

  // A member's parameters in layer order (W0, b0, W1, b1, ...), on the host.
  std::vector<float> get_params(int member = 0);
  void set_params(const std::vector<float>& params, int member = 0);
  std::vector<float> get_gradients(int member = 0);
  // Every member's parameters, member after member (members() * param_count() floats), in one copy.
  std::vector<float> get_all_params();
  // The whole arena (every member's parameters, gradients, optimizer state, step state, settings and
  // batch buffers: members() * plan().total() bytes) on the host, and back: what lets a warm-up step
  // (nn/fit.h) leave the model exactly as it found it. restore() takes a snapshot of this model.
  std::vector<std::byte> snapshot();
  void restore(const std::vector<std::byte>& snapshot);

 private:
  // Calls add(name, bytes, slot) for every buffer of the arena, in order; slot is where `self` keeps
  // its pointer (a T**), or nullptr when there is no model (a plan alone).
  template <class Add>
  static void walk_layout(const ModelSpec& spec, Model* self, Add add);

  struct Layer {
    int in, out;
    Activation act;  // applied in the forward epilogue (linear for a fused sigmoid/softmax output)
    float *W = nullptr, *b = nullptr, *dW = nullptr, *db = nullptr, *Y = nullptr;
  };
  void check_batch(int m) const;
  // compute_gradients, and with `counts_step` the step counted for the optimizer (StepState::t).
  void gradients(const float* X, const float* T, int m, const int* rows, int64_t batch_stride, bool counts_step);
  // `data`: the layout of the input data X and T (pack() with the data's and the rows' strides).
  void forward(const float* X, int m, const int* rows, const Pack& data);
  void loss_and_accumulate(const float* T, int m, const int* rows, const Pack& data);
  void backward(const float* X, int m, const int* rows, const Pack& data);
  void optimizer_step(int m);
  std::vector<float> download(const float* flat, int member);  // (param_count) floats to the host

  std::vector<ModelSpec> specs_;
  Backend& backend_;
  MemoryPlan plan_;  // one member's, checked against each member's cap before the pool takes anything
  int64_t stride_;   // bytes between members' buffers: the plan's total
  MemoryPool pool_;
  void* arena_ = nullptr;
  std::vector<Layer> layers_;  // member 0's buffers
  float *params_, *grads_, *opt_m_ = nullptr, *opt_v_ = nullptr;
  float *d_out_, *d_next_, *row_loss_, *row_correct_;
  double* totals_;
  MemberSettings* settings_;
  StepState* step_;
};

}  // namespace mf
