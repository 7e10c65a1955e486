#pragma once
// A Sequential stack of Dense layers on one backend. All of its memory comes
// from one allocation in its own capped pool, carved into parameters,
// gradients, optimizer state and the buffers of one batch (llm.c style); nothing
// is allocated after construction.
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

class Model {
 public:
  // Throws OutOfMemory when the plan is over the spec's memory limit, before taking anything.
  Model(const ModelSpec& spec, Backend& backend);
  ~Model();

  static MemoryPlan plan(const ModelSpec& spec);
  static int64_t param_count(const ModelSpec& spec);

  const ModelSpec& spec() const { return spec_; }
  Backend& backend() { return backend_; }
  int64_t param_count() const { return param_count(spec_); }
  const PoolStats& pool_stats() const { return pool_.stats(); }
  int target_cols() const;

  // The model's pool: the arena of the plan, and what an EpochIterator takes for the batches.
  MemoryPool& pool() { return pool_; }

  // Forward, loss and backward on X(m, input), T(m, target_cols), m <= batch size:
  // leaves d(mean batch loss)/d(params) in the gradient buffer. With indices (only where the backend
  // fuses_gather), X and T are the data set and the batch is their rows indices[0..m).
  void compute_gradients(const float* X, const float* T, int m, const int* indices = nullptr);
  // compute_gradients, then one optimizer step.
  void train_batch(const float* X, const float* T, int m, const int* indices = nullptr);
  // Forward and loss only.
  void evaluate_batch(const float* X, const float* T, int m);
  // The sums of row losses and row accuracies since reset_totals(); reading waits on this model only.
  void reset_totals();
  std::pair<double, double> read_totals();

  // Parameters in layer order (W0, b0, W1, b1, ...), on the host.
  std::vector<float> get_params();
  void set_params(const std::vector<float>& params);
  std::vector<float> get_gradients();

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
  void forward(const float* X, int m, const int* indices = nullptr);
  void loss_and_accumulate(const float* T, int m, const int* indices = nullptr);
  void backward(const float* X, int m, const int* indices);
  void optimizer_step();
  std::vector<float> download(const float* flat);  // (param_count) floats to the host

  ModelSpec spec_;
  Backend& backend_;
  MemoryPlan plan_;  // checked against the cap before the pool takes anything
  MemoryPool pool_;
  void* arena_ = nullptr;
  std::vector<Layer> layers_;
  float *params_, *grads_, *opt_m_ = nullptr, *opt_v_ = nullptr;
  float *d_out_, *d_next_, *row_loss_, *row_correct_;
  double* totals_;
  int64_t step_ = 0;
};

}  // namespace mf
