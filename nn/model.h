#pragma once
// A Sequential model of the spec's layers on one backend, or a pack of them: K members of the same
// shape (pack_key) trained in the same launches, each with its own weights, seed, data order and
// settings. All of its memory comes from one allocation in its own capped pool, carved into
// parameters, gradients, optimizer state and the buffers of one batch (llm.c style); the only other
// allocation is fit's batches (nn/epoch_iterator.h), from the same pool, before the first step. A
// pack's allocation is K copies of one member's plan side by side, member z's at z * the plan's
// bytes: every member's share is exactly its plan, and every kernel finds a member's buffers from
// member 0's (kernels/pack.h).
//
// The layers run as stages: a Dense with its activation in its products' epilogue (and an
// Activation layer that follows a linear Dense folded into it), a Dropout, a BatchNormalization, an
// Activation of its own; a Flatten is nothing (rows are flat). The loss takes the output's sigmoid
// or softmax where it takes logits (kernels/element_math.h: takes_logits). Backward goes down the
// stages, each handing the stage below the gradient at its output, already through that stage's
// activation where the stage below is a Dense (the tiled product's epilogue, or the element-wise
// kernel's).
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "nn/pack_key.h"
#include "nn/spec.h"

namespace mf {

// One named buffer of a model's arena; bytes are aligned to the pool's alignment.
struct PlanPart {
  std::string name;  // "parameters", "layer 2 output", "shuffle order", ...
  size_t bytes = 0;
};

// The exact bytes a model needs for its batch size, as one table of named buffers in arena order
// (llm.c's parameter-size table): the plan is their sum, and the constructor carves the arena by
// walking the same table, so the two cannot disagree.
struct MemoryPlan {
  std::vector<PlanPart> parts;
  size_t total() const;
  size_t bytes_of(const std::string& name) const;  // 0 when there is no such part
  std::string describe() const;  // "parameters 11.00 KiB, gradients 11.00 KiB, ..."
};

// A member's optimizer state as Keras 3's optimizer.variables hold it: the steps taken (its
// `iterations`), each state slot of nn/settings.h optimizer_slots() (param_count() floats in the
// flat parameter order, which is Keras's trainable_variables'), and Nadam's product of its momentum
// schedule (its `u_product`; 1 for the other optimizers and before the first step).
struct OptimizerState {
  int64_t iterations = 0;
  std::vector<std::vector<float>> slots;
  float nadam_product = 1.f;
};

// Throws OutOfMemory, naming the model, every part and the cap, when `plan` is over the spec's
// limit.
void check_plan_fits(const ModelSpec& spec, const MemoryPlan& plan);

class Model {
 public:
  // One model. Throws OutOfMemory when the plan is over the spec's memory limit, before taking
  // anything.
  Model(const ModelSpec& spec, Backend& backend);
  // A pack of members of one pack_key (std::invalid_argument otherwise, or when empty); its pool's
  // cap is the sum of theirs, and each member's plan is checked against its own limit
  // (OutOfMemory).
  Model(std::vector<ModelSpec> specs, Backend& backend);
  ~Model();

  static MemoryPlan plan(const ModelSpec& spec);
  // Trainable parameters (the flat buffer the optimizer steps), and every weight (those and the
  // batch normalizations' moving statistics: Keras's get_weights(), a weights file's).
  static int64_t param_count(const ModelSpec& spec);
  static int64_t weight_count(const ModelSpec& spec);

  int members() const { return int(specs_.size()); }
  // The settings of the next fit of a model of one member (a later Keras fit() call's arguments:
  // epochs, validation split, shuffle, callbacks), its weights and optimizer state kept. The batch
  // size is the plan's: a different one is std::invalid_argument, as is a pack.
  void set_fit(const FitSpec& fit);
  const ModelSpec& spec(int member = 0) const { return specs_[size_t(member)]; }
  Backend& backend() { return backend_; }
  int64_t param_count() const { return param_count(specs_[0]); }
  const PoolStats& pool_stats() const { return pool_.stats(); }
  // A member's share of the pool: its own cap; the pack's reserved and peak bytes over its members
  // (their plans are equal), or its cap where the pool reserves every cap (reserve mode).
  PoolStats member_share(int member) const;
  int target_cols() const { return specs_[0].target_cols(); }
  // The values a loss pass gives per row and a fit reads back per member: the loss, then each
  // metric.
  int values() const { return shape_.values(); }
  // The trainable tensors in the flat parameter buffer (kernels/param_tensors.h), on the host.
  const std::vector<ParamTensor>& tensors() const { return tensors_; }
  // Whether the first layer reads its batch from the data set by row index (a Dense on a backend
  // that fuses_gather): else fit hands it gathered batches.
  bool reads_by_index() const;
  // The pack's layout for a training step's backend calls on the model's own buffers (data_stride =
  // stride: no data), with its step state.
  Pack pack() const { return {members(), stride_, stride_, 0, step_}; }

  // The model's pool: the arena of the plan, and what an EpochIterator takes for the batches.
  MemoryPool& pool() { return pool_; }
  // Each member's MemberSettings, in the model's memory (at pack().stride): what the shuffle reads.
  const MemberSettings* settings() const { return settings_; }

  // Forward, loss and backward on X(m, input), T(m, y_cols), m <= batch size, for every
  // member: leaves d(mean batch loss)/d(params) in the gradient buffers and the batch's loss in the
  // totals, its activity regularizers' penalties included (the weight regularizers' gradients and
  // penalties are the optimizer step's: compute_gradients leaves them out). X and T are the data
  // set, which every member reads, or the members' own batches `batch_stride` bytes apart. With
  // rows (only where reads_by_index, `batch_stride` apart: the epoch's orders), X and T are the
  // data set and a member's batch is their rows rows[f..f+m), f its step state's first_row
  // (kernels/pack.h). A step's calls are the same every step: a CUDA graph can replay them.
  // `weights`: what T's column after each row's targets holds (DeviceData::weights), every kind of
  // weight applied.
  void compute_gradients(const float* X, const float* T, int m, const int* rows = nullptr,
                         int64_t batch_stride = 0, RowWeights weights = RowWeights::none) {
    gradients(X, T, m, rows, batch_stride, false, weights);
  }
  // compute_gradients, counting the step, then one optimizer step, which moves first_row past the
  // batch, and the regularizers' penalties added to the batch's loss.
  void train_batch(const float* X, const float* T, int m, const int* rows = nullptr,
                   int64_t batch_stride = 0, RowWeights weights = RowWeights::none);
  // An epoch's first batch starts at row 0 of its order (first_row = 0 for every member).
  void start_epoch();
  // Inference's forward (Dropout passes its input on, BatchNormalization uses its moving
  // statistics) and the loss with its penalties, every member on the same rows X(m, input), T(m,
  // y_cols) of the data set (the targets, then the row's weight where `weights` is not none).
  // Sample weights apply here, class weights not (as Keras evaluates).
  void evaluate_batch(const float* X, const float* T, int m, RowWeights weights = RowWeights::none);
  // Inference's forward on X(m, input) for a model of one member: its output buffer (m, outputs),
  // on the backend, valid until the next call. Where the loss takes logits (takes_logits) they are
  // the output layer's pre-activation: nn/fit.h predict applies the activation.
  const float* predict_batch(const float* X, int m);
  // Each member's sums of its rows' values (values() of them: the loss, then each metric's value or
  // counts, kernels/loss_row.h), then its metrics' histograms (LossShape::totals()), since
  // reset_totals(), in one copy; reading waits on this model only.
  void reset_totals();
  std::vector<std::vector<double>> read_totals();

  // A member's trainable parameters in layer order (Dense W, b; BatchNormalization gamma, beta;
  // ...), on the host.
  std::vector<float> get_params(int member = 0);
  void set_params(const std::vector<float>& params, int member = 0);
  std::vector<float> get_gradients(int member = 0);
  // Every member's parameters, member after member (members() * param_count() floats), in one copy:
  // into `host` (resized), which a caller keeps from epoch to epoch so that a large pack's copy
  // does not fault in fresh pages each time, or into a new vector.
  void get_all_params(std::vector<float>& host);
  std::vector<float> get_all_params();
  // A member's every weight in Keras's get_weights() order: per layer, a Dense's kernel and bias, a
  // BatchNormalization's gamma, beta, moving mean and moving variance (weight_count() floats).
  std::vector<float> get_weights(int member = 0);
  void set_weights(const std::vector<float>& weights, int member = 0);
  // A member's optimizer state, and back (what a .keras file saves and restores):
  // std::invalid_argument where the slots are not optimizer_slots()' count of param_count() floats
  // each, or iterations is negative.
  OptimizerState optimizer_state(int member = 0);
  void set_optimizer_state(const OptimizerState& state, int member = 0);
  // From the next step on, every kernel leaves member's buffers as they are (it diverged, or
  // stopped early, in a pack that goes on): it costs no work, and its weights stay those it has
  // now. An evaluation skips it too, until resume(member): what a fit does at its end, so that
  // every member is evaluated afterwards.
  void stop(int member);
  void resume(int member);
  // A member's learning rate from the next step on (ReduceLROnPlateau; not with a schedule), and
  // the rate it has now.
  void set_learning_rate(float rate, int member = 0);
  float learning_rate(int member = 0) const { return learning_rates_[size_t(member)]; }
  // The whole arena (every member's parameters, gradients, optimizer state, step state, settings
  // and batch buffers: members() * plan().total() bytes) on the host, and back: what lets a warm-up
  // step (nn/fit.h) leave the model exactly as it found it. restore() takes a snapshot of this
  // model.
  std::vector<std::byte> snapshot();
  void restore(const std::vector<std::byte>& snapshot);

 private:
  struct Stage;
  static std::vector<Stage> stages_of(const ModelSpec& spec);
  template <class Add>
  static void walk_layout(const ModelSpec& spec, std::vector<Stage>& stages, Model* self, Add add);
  void check_batch(int m) const;
  // compute_gradients, and with `counts_step` the step counted for the optimizer (StepState::t).
  void gradients(const float* X, const float* T, int m, const int* rows, int64_t batch_stride,
                 bool counts_step, RowWeights weights);
  // The loss pass's shape for targets followed by `weights`: applied in training, and in
  // evaluation where they are sample weights.
  LossShape shape_for(RowWeights weights, bool training) const;
  // `data`: the layout of the input data X and T (pack() with the data's and the rows' strides).
  // Returns the output's buffer.
  const float* forward(const float* X, int m, const int* rows, const Pack& data, bool training);
  void backward(const float* X, int m, const int* rows, const Pack& data);
  // The regularizers' penalties into the batch's loss: the weights' (their partials, as the
  // optimizer step or weight_penalty wrote them) and the activity regularizers' (as the forward
  // wrote them).
  void add_penalties(int m, bool weights, bool activity);
  // The batch's rows' codes into the totals' histograms (AUC's: kernels/loss_row.h bins_of).
  void count_bins(int m);
  OptimizerStep optimizer_step(int m) const;
  std::vector<float> download(const float* flat, int member);  // (param_count) floats to the host
  void initialize(int member);

  std::vector<ModelSpec> specs_;
  Backend& backend_;
  // one member's, checked against each member's cap before the pool takes anything
  MemoryPlan plan_;
  int64_t stride_;  // bytes between members' buffers: the plan's total
  MemoryPool pool_;
  void* arena_ = nullptr;
  std::vector<Stage> stages_;         // member 0's buffers
  std::vector<ParamTensor> tensors_;  // the flat parameter buffer's tensors
  LossShape shape_;
  // the trainable parameters and their gradients; the moving statistics
  float *params_, *grads_, *moving_;
  float* slots_[3] = {};
  float *d_out_, *d_next_, *values_;
  double* totals_;
  MemberSettings* settings_;
  LayerSettings* layer_settings_;
  ParamTensor* device_tensors_;
  double *penalty_partials_ = nullptr, *activity_partials_ = nullptr, *norm_partials_ = nullptr;
  float* norms_ = nullptr;
  int weight_blocks_ = 0, activity_blocks_ = 0;
  StepState* step_;
  // each member's constant rate, as set_learning_rate last wrote it
  std::vector<float> learning_rates_;
};

}  // namespace mf
