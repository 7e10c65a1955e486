#include "nn/model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <type_traits>

#include "nn/initializers.h"
#include "nn/settings.h"
#include "runtime/names.h"
#include "runtime/bytes.h"
#include "runtime/error.h"
#include "runtime/rng.h"

namespace mf {

// One layer as the kernels run it. Its buffers are member 0's.
struct Model::Stage {
  LayerKind kind = LayerKind::dense;
  int layer = 0;        // its index in the spec: its LayerSettings, its buffers' names
  int in = 0, out = 0;  // widths: a Dense's in and units; the others keep the width
  // a Dense's epilogue's (linear where the loss takes it), an Activation's
  Activation act = Activation::linear;
  bool use_bias = true;
  bool pre_activation = false;  // a Dense keeps Z, its activation needs it
  bool activity = false;        // a Dense with an activity regularizer
  float *W = nullptr, *b = nullptr, *dW = nullptr, *db = nullptr;  // Dense
  // BatchNormalization
  float *gamma = nullptr, *beta = nullptr, *dgamma = nullptr, *dbeta = nullptr;
  float *moving_mean = nullptr, *moving_variance = nullptr, *mean = nullptr, *inverse = nullptr;
  float *Y = nullptr, *Z = nullptr;     // (B, out): its output and a Dense's pre-activation
  double* activity_partials = nullptr;  // a Dense's activity penalty, per block of its output
  int activity_blocks = 0;

  Through own() const { return {act, Y, Z}; }
  // What the stage above hands this one its output gradient through: a Dense's activation, where
  // no activity regularizer's gradient must be added before it (then activity_backward does both).
  Through through() const { return kind == LayerKind::dense && !activity ? own() : Through{}; }
  BatchNormBuffers batch_norm() const {
    return {layer, gamma, beta, moving_mean, moving_variance, mean, inverse, dgamma, dbeta};
  }
};

namespace {

size_t floats(int64_t n) { return MemoryPool::aligned(size_t(n) * sizeof(float)); }
size_t doubles(int64_t n) { return MemoryPool::aligned(size_t(n) * sizeof(double)); }
template <class T>
size_t bytes_for(size_t n) {
  return MemoryPool::aligned(n * sizeof(T));
}

LossShape loss_shape(const ModelSpec& spec) {
  LossShape shape{spec.loss.kind, spec.loss.from_logits, spec.target_cols(), {}};
  const std::vector<MetricSpec> metrics = spec.metric_list();
  shape.metrics.count = int(metrics.size());
  for (size_t i = 0; i < metrics.size(); ++i) shape.metrics.kind[i] = metrics[i].kind;
  return shape;
}

// The batch normalizations' moving statistics: a mean and a variance per column.
int64_t moving_count(const ModelSpec& spec) {
  int64_t count = 0;
  for (size_t i = 0; i < spec.layers.size(); ++i)
    if (spec.layers[i].kind == LayerKind::batch_normalization) count += 2 * int64_t(spec.width(i));
  return count;
}

int total_blocks(const std::vector<ParamTensor>& tensors) {
  return tensors.empty() ? 0 : tensors.back().first_block + param_blocks(tensors.back().count);
}

bool clips_by_norm(const OptimizerSpec& o) {
  return o.clip == ClipKind::norm || o.clip == ClipKind::global_norm;
}

}  // namespace

std::vector<Model::Stage> Model::stages_of(const ModelSpec& spec) {
  std::vector<Stage> stages;
  int width = spec.input;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec& l = spec.layers[i];
    Stage s;
    s.kind = l.kind, s.layer = int(i), s.in = width, s.out = width;
    switch (l.kind) {
      case LayerKind::flatten:
        continue;  // rows are flat already
      case LayerKind::activation:
        // After a linear Dense, the product's epilogue applies it (its activity regularizer sees
        // the Dense's output, so one with a regularizer keeps its Activation apart).
        if (!stages.empty() && stages.back().kind == LayerKind::dense &&
            stages.back().act == Activation::linear && !stages.back().activity) {
          stages.back().act = l.activation;
          continue;
        }
        s.act = l.activation;
        break;
      case LayerKind::dense:
        s.out = width = l.units;
        s.act = l.activation, s.use_bias = l.use_bias, s.activity = l.activity_regularizer.any();
        break;
      default:
        break;
    }
    stages.push_back(s);
  }
  if (takes_logits(spec.loss.kind)) {  // the loss applies the output's sigmoid or softmax itself
    if (stages.back().kind == LayerKind::activation)
      stages.pop_back();
    else
      stages.back().act = Activation::linear;
  }
  for (Stage& s : stages)
    s.pre_activation = s.kind == LayerKind::dense && needs_pre_activation(s.act);
  return stages;
}

int64_t Model::param_count(const ModelSpec& spec) {
  const std::vector<ParamTensor> tensors = param_tensors(spec);
  return tensors.empty() ? 0 : tensors.back().begin + tensors.back().count;
}

int64_t Model::weight_count(const ModelSpec& spec) {
  return param_count(spec) + moving_count(spec);
}

template <class Add>
void Model::walk_layout(const ModelSpec& spec, std::vector<Stage>& stages, Model* self, Add add) {
  const int64_t B = spec.fit.batch_size, P = param_count(spec);
  auto slot = [self](auto member) { return self ? &(self->*member) : nullptr; };
  add("parameters", floats(P), slot(&Model::params_));
  add("gradients", floats(P), slot(&Model::grads_));  // of the parameters
  const std::vector<const char*> slots = optimizer_slots(spec.optimizer);
  for (size_t k = 0; k < slots.size(); ++k)
    add(slots[k], floats(P), self ? &self->slots_[k] : nullptr);
  if (const int64_t moving = moving_count(spec))
    add("moving statistics", floats(moving), slot(&Model::moving_));
  int widest = 0, activity_blocks = 0;
  for (Stage& s : stages) {  // (B, out) each: what backward needs of the forward pass
    const std::string name = "layer " + std::to_string(s.layer + 1);
    add(name + " output", floats(B * s.out), &s.Y);
    if (s.pre_activation) add(name + " pre-activation", floats(B * s.out), &s.Z);
    if (s.kind == LayerKind::batch_normalization)
      add(name + " batch statistics", floats(2 * s.out), &s.mean);
    if (s.activity) activity_blocks += param_blocks(B * s.out);
    widest = std::max(widest, s.out);
  }
  // Backward's dY of one layer and dX of the next, swapped layer by layer: (B, widest layer) each.
  add("backward dY", floats(B * widest), slot(&Model::d_out_));
  add("backward dX", floats(B * widest), slot(&Model::d_next_));
  // each row's loss, then its metrics' values (kernels/loss_row.h values_of); their sums, then the
  // metrics' histograms (bins_of)
  const LossShape shape = loss_shape(spec);
  add("row values", floats(B * shape.values()), slot(&Model::values_));
  add("loss totals", doubles(shape.totals()), slot(&Model::totals_));
  const std::vector<ParamTensor> tensors = param_tensors(spec);
  if (weight_regularized(spec))
    add("penalty partials", doubles(total_blocks(tensors)), slot(&Model::penalty_partials_));
  if (activity_blocks)
    add("activity penalty partials", doubles(activity_blocks), slot(&Model::activity_partials_));
  if (clips_by_norm(spec.optimizer)) {
    add("gradient norm partials", doubles(total_blocks(tensors)), slot(&Model::norm_partials_));
    add("gradient norms", floats(int64_t(tensors.size()) + 1), slot(&Model::norms_));
  }
  add("member settings", bytes_for<MemberSettings>(1), slot(&Model::settings_));
  add("layer settings", bytes_for<LayerSettings>(spec.layers.size()),
      slot(&Model::layer_settings_));
  add("parameter tensors", bytes_for<ParamTensor>(std::max<size_t>(1, tensors.size())),
      slot(&Model::device_tensors_));
  add("step state", bytes_for<StepState>(1), slot(&Model::step_));
}

MemoryPlan Model::plan(const ModelSpec& spec) {
  MemoryPlan p;
  std::vector<Stage> stages = stages_of(spec);
  walk_layout(spec, stages, nullptr, [&](std::string name, size_t bytes, auto*) {
    p.parts.push_back({std::move(name), bytes});
  });
  return p;
}

size_t MemoryPlan::total() const {
  size_t sum = 0;
  for (const PlanPart& part : parts) sum += part.bytes;
  return sum;
}

size_t MemoryPlan::bytes_of(const std::string& name) const {
  for (const PlanPart& part : parts)
    if (part.name == name) return part.bytes;
  return 0;
}

std::string MemoryPlan::describe() const {
  return joined(parts,
                [](const PlanPart& part) { return part.name + " " + format_bytes(part.bytes); });
}

void check_plan_fits(const ModelSpec& spec, const MemoryPlan& p) {
  if (p.total() > spec.memory.limit_bytes)
    throw OutOfMemory(
        "model '" + spec.name + "' needs " + format_bytes_exact(p.total()) + " at batch size " +
        std::to_string(spec.fit.batch_size) + " (" + p.describe() + ") but its memory.limit is " +
        format_bytes_exact(spec.memory.limit_bytes) + " (mode " + to_string(spec.memory.mode) +
        "); raise memory.limit or lower fit.batch_size");
}

namespace {

// The pack's members: at least one, all of one pack_key, each plan within its member's cap.
MemoryPlan checked_plan(const std::vector<ModelSpec>& members) {
  if (members.empty()) throw std::invalid_argument("a pack of no models");
  MemoryPlan p = Model::plan(members[0]);
  for (const ModelSpec& spec : members) {
    if (const std::string differs = pack_difference(spec, members[0]); !differs.empty())
      throw std::invalid_argument("models '" + spec.name + "' and '" + members[0].name +
                                  "' cannot share a pack: its " + differs);
    check_plan_fits(spec, p);
  }
  return p;
}

size_t summed_caps(const std::vector<ModelSpec>& members) {
  size_t sum = 0;
  for (const ModelSpec& spec : members) sum += spec.memory.limit_bytes;
  return sum;
}

std::string pool_owner(const std::vector<ModelSpec>& members) {
  if (members.size() == 1) return members[0].name;
  return "pack of " + std::to_string(members.size()) + " ('" + members[0].name + "', ...)";
}

}  // namespace

Model::Model(const ModelSpec& spec, Backend& backend)
    : Model(std::vector<ModelSpec>{spec}, backend) {}

Model::Model(std::vector<ModelSpec> specs, Backend& backend)
    : specs_(std::move(specs)),
      backend_(backend),
      plan_(checked_plan(specs_)),
      stride_(int64_t(plan_.total())),
      pool_(pool_owner(specs_), summed_caps(specs_), specs_[0].memory.mode, backend.upstream()) {
  const ModelSpec& spec = specs_[0];
  stages_ = stages_of(spec);
  tensors_ = param_tensors(spec);
  shape_ = loss_shape(spec);
  // Carve member 0's share by walking the plan's table; the cursor must end exactly at its end.
  // Zeroed at once, by the thread that builds the model: every buffer starts defined, and on the
  // cpu its pages are mapped here rather than by the threads of the first step (a pack's members
  // faulting in fresh pages on several threads at once doubled a 512-member pack's start-up).
  arena_ = pool_.allocate(plan_.total() * specs_.size());
  backend_.zero(arena_, plan_.total() * specs_.size());
  std::byte* cursor = static_cast<std::byte*>(arena_);
  walk_layout(spec, stages_, this, [&](const std::string&, size_t bytes, auto* slot) {
    *slot = reinterpret_cast<std::remove_pointer_t<decltype(slot)>>(cursor);
    cursor += bytes;
  });
  if (cursor != static_cast<std::byte*>(arena_) + plan_.total())
    throw std::logic_error("model arena: the layout walked " +
                           std::to_string(cursor - static_cast<std::byte*>(arena_)) +
                           " bytes of a plan of " + std::to_string(plan_.total()));
  // The layers' views of the flat buffers: their tensors, moving statistics and penalty partials.
  int64_t moving = 0;
  double* activity = activity_partials_;
  for (Stage& s : stages_) {
    for (const ParamTensor& t : tensors_) {
      if (t.layer != s.layer) continue;
      float* const param = params_ + t.begin;
      float* const grad = grads_ + t.begin;
      switch (t.role) {
        case TensorRole::kernel:
          s.W = param, s.dW = grad;
          break;
        case TensorRole::bias:
          s.b = param, s.db = grad;
          break;
        case TensorRole::gamma:
          s.gamma = param, s.dgamma = grad;
          break;
        case TensorRole::beta:
          s.beta = param, s.dbeta = grad;
          break;
      }
    }
    if (s.kind == LayerKind::batch_normalization) {
      s.moving_mean = moving_ + moving, s.moving_variance = moving_ + moving + s.out;
      moving += 2 * s.out;
      s.inverse = s.mean + s.out;
    }
    if (s.activity) {
      s.activity_partials = activity;
      s.activity_blocks = param_blocks(int64_t(spec.fit.batch_size) * s.out);
      activity += s.activity_blocks;
      activity_blocks_ += s.activity_blocks;
    }
  }
  if (weight_regularized(spec)) weight_blocks_ = total_blocks(tensors_);
  for (int z = 0; z < members(); ++z) initialize(z);
  reset_totals();
}

Model::~Model() { pool_.deallocate(arena_); }

// A member's initial state: its weights drawn from its seed (each tensor in layer order, from one
// stream: a Dense's kernel, then its bias), its optimizer state (zero, Adagrad's accumulator at its
// initial value), its settings, the tensors' table and its step state.
void Model::initialize(int z) {
  const ModelSpec& spec = specs_[size_t(z)];
  std::vector<float> params(static_cast<size_t>(param_count()), 0.f),
      moving(size_t(moving_count(spec)), 0.f);
  Rng rng = Rng(spec.seed).fork(0);
  size_t at_moving = 0;
  for (const Stage& s : stages_) {
    const LayerSpec& l = spec.layers[size_t(s.layer)];
    for (const ParamTensor& t : tensors_) {
      if (t.layer != s.layer) continue;
      const Initializer& init = t.role == TensorRole::kernel  ? l.kernel_initializer
                                : t.role == TensorRole::bias  ? l.bias_initializer
                                : t.role == TensorRole::gamma ? l.gamma_initializer
                                                              : l.beta_initializer;
      const int fan_in = t.role == TensorRole::kernel ? s.in : s.out;
      mf::initialize(init, params.data() + t.begin, t.count, fan_in, s.out, rng);
    }
    if (s.kind == LayerKind::batch_normalization) {
      mf::initialize(l.moving_mean_initializer, moving.data() + at_moving, s.out, s.out, s.out,
                     rng);
      mf::initialize(l.moving_variance_initializer, moving.data() + at_moving + size_t(s.out),
                     s.out, s.out, s.out, rng);
      at_moving += 2 * size_t(s.out);
    }
  }
  set_params(params, z);
  if (!moving.empty())
    backend_.to_device(member(moving_, z, stride_), moving.data(), moving.size() * sizeof(float));
  if (spec.optimizer.kind == OptimizerKind::adagrad) {
    const std::vector<float> accumulator(params.size(), spec.optimizer.initial_accumulator_value);
    backend_.to_device(member(slots_[0], z, stride_), accumulator.data(),
                       accumulator.size() * sizeof(float));
  }
  const MemberSettings settings = member_settings(spec);
  backend_.to_device(member(settings_, z, stride_), &settings, sizeof settings);
  learning_rates_.push_back(settings.optimizer.learning_rate);
  const std::vector<LayerSettings> layers = layer_settings(spec);
  backend_.to_device(member(layer_settings_, z, stride_), layers.data(),
                     layers.size() * sizeof(LayerSettings));
  backend_.to_device(member(device_tensors_, z, stride_), tensors_.data(),
                     tensors_.size() * sizeof(ParamTensor));
  const StepState state;
  backend_.to_device(member(step_, z, stride_), &state, sizeof state);
}

PoolStats Model::member_share(int z) const {
  const PoolStats& pack = pool_.stats();
  const size_t cap = specs_[size_t(z)].memory.limit_bytes, count = specs_.size();
  const bool reserves_caps = pool_.mode() == PoolMode::reserve;
  return {cap, reserves_caps ? cap : pack.reserved_bytes / count, pack.in_use_bytes / count,
          pack.peak_bytes / count};
}

bool Model::reads_by_index() const {
  return backend_.fuses_gather() && stages_.front().kind == LayerKind::dense;
}

const float* Model::forward(const float* X, int m, const int* rows, const Pack& data,
                            bool training) {
  const float* input = X;
  Pack layout = data;  // the first layer reads the data; the others the layer below's output
  for (const Stage& s : stages_) {
    switch (s.kind) {
      case LayerKind::dense:
        backend_.dense_forward(input, s.W, s.b, s.Y, s.Z, m, s.in, s.out, s.act,
                               input == X ? rows : nullptr,
                               layout);  // (m, out)
        break;
      case LayerKind::dropout:
        if (!training) continue;  // inference passes its input on
        backend_.dropout_forward(input, s.Y, m, s.out, s.layer, settings_, layer_settings_, layout);
        break;
      case LayerKind::batch_normalization:
        backend_.batch_norm_forward(input, s.Y, m, s.out, s.batch_norm(), layer_settings_, training,
                                    layout);
        break;
      case LayerKind::activation:
        backend_.activation_forward(input, s.Y, int64_t(m) * s.out, s.act, layout);
        break;
      case LayerKind::flatten:
        break;
    }
    if (s.activity)
      backend_.activity_penalty(s.Y, m, s.out, s.layer, layer_settings_, s.activity_partials,
                                s.activity_blocks, pack());
    input = s.Y;
    layout = pack();
  }
  return input;
}

void Model::backward(const float* X, int m, const int* rows, const Pack& data) {
  // grad: (m, out), the gradient at the current stage's output
  float *grad = d_out_, *spare = d_next_;
  // The model's own buffers, with the data's counts_step: after a training step's loss pass counted
  // the step, Dropout's backward finds the forward's mask at the step before (kernels/pack.h).
  Pack own = pack();
  own.counts_step = data.counts_step;
  const Stage& top = stages_.back();
  // The output's own activation where the loss does not take it (mse through a sigmoid), after its
  // activity regularizer's gradient.
  if (top.activity)
    backend_.activity_backward(grad, grad, m, top.out, top.layer, layer_settings_, top.own(), own);
  else if (top.kind == LayerKind::dense && top.act != Activation::linear)
    backend_.activation_backward(grad, grad, int64_t(m) * top.out, top.own(), {}, own);
  // whether a stage below the current one has parameters (needs its gradient)
  bool params_below = false;
  std::vector<bool> needs_input_gradient(stages_.size());
  for (size_t s = 0; s < stages_.size(); ++s) {
    needs_input_gradient[s] = params_below;
    params_below = params_below || stages_[s].W || stages_[s].gamma || stages_[s].beta;
  }
  for (size_t s = stages_.size(); s-- > 0;) {
    const Stage& st = stages_[s];
    const Stage* below = s > 0 ? &stages_[s - 1] : nullptr;
    const bool input_gradient = needs_input_gradient[s];
    const Through through = input_gradient ? below->through() : Through{};
    const float* input = below ? below->Y : X;
    const Pack& layout = below ? own : data;
    switch (st.kind) {
      case LayerKind::dense:
        backend_.dense_backward_params(input, grad, st.dW, st.db, m, st.in, st.out,
                                       below ? nullptr : rows, layout);
        if (!input_gradient) break;
        // through below's activation
        backend_.dense_backward_input(grad, st.W, spare, m, st.in, st.out, through, own);
        std::swap(grad, spare);
        break;
      case LayerKind::dropout:
        if (input_gradient)
          backend_.dropout_backward(grad, grad, m, st.out, st.layer, settings_, layer_settings_,
                                    through, own);
        break;
      case LayerKind::batch_normalization:
        backend_.batch_norm_backward(input, grad, input_gradient ? grad : nullptr, m, st.out,
                                     st.batch_norm(), through, layout);
        break;
      case LayerKind::activation:
        if (input_gradient)
          backend_.activation_backward(grad, grad, int64_t(m) * st.out, {st.act, st.Y, input},
                                       through, own);
        break;
      case LayerKind::flatten:
        break;
    }
    if (input_gradient && below->activity)  // its gradient, then its activation's
      backend_.activity_backward(grad, grad, m, below->out, below->layer, layer_settings_,
                                 below->own(), own);
  }
}

OptimizerStep Model::optimizer_step(int m) const {
  const OptimizerSpec& o = specs_[0].optimizer;
  OptimizerStep s;
  s.kind = o.kind, s.clip = o.clip, s.momentum_slot = momentum_slot(o), s.amsgrad = o.amsgrad;
  s.regularized = penalty_partials_ != nullptr;
  s.params = params_, s.grads = grads_;
  for (int k = 0; k < 3; ++k) s.slot[k] = slots_[k];
  s.count = param_count();
  s.tensors = device_tensors_, s.tensor_count = int(tensors_.size()),
  s.blocks = total_blocks(tensors_);
  s.settings = settings_, s.layers = layer_settings_;
  s.norm_partials = norm_partials_, s.norms = norms_, s.penalty = penalty_partials_;
  s.batch_rows = m;
  return s;
}

void Model::add_penalties(int m, bool weights, bool activity) {
  const int weight_blocks = weights ? weight_blocks_ : 0,
            activity_blocks = activity ? activity_blocks_ : 0;
  if (weight_blocks || activity_blocks)
    backend_.add_penalty(penalty_partials_, weight_blocks, activity_partials_, activity_blocks, m,
                         totals_, pack());
}

void Model::count_bins(int m) {
  double* bins = totals_ + shape_.values();
  for (int k = 0, column = 1; k < shape_.metrics.count; ++k) {
    const Metric metric = shape_.metrics.kind[k];
    if (const int count = bins_of(metric)) {
      backend_.count_codes(values_, shape_.values(), column, m, bins, count, pack());
      bins += count;
    }
    column += values_of(metric);
  }
}

void Model::start_epoch() {
  backend_.zero_strided(&step_->first_row, size_t(stride_), sizeof(int64_t), specs_.size());
}

void Model::check_batch(int m) const {
  if (m < 1 || m > specs_[0].fit.batch_size)
    throw std::logic_error("batch of " + std::to_string(m) + " rows for buffers of " +
                           std::to_string(specs_[0].fit.batch_size));
}

LossShape Model::shape_for(RowWeights weights, bool training) const {
  LossShape shape = shape_;
  shape.weight_column = weights != RowWeights::none;
  shape.weighted = shape.weight_column && (training || weights == RowWeights::sample);
  return shape;
}

void Model::gradients(const float* X, const float* T, int m, const int* rows, int64_t batch_stride,
                      bool counts_step, RowWeights weights) {
  check_batch(m);
  // The data's layout: the members' own batches, or the data set read by index (or by all alike).
  Pack data = pack();
  data.data_stride = rows ? 0 : batch_stride;
  data.rows_stride = rows ? batch_stride : 0;
  data.counts_step = counts_step;
  const float* out = forward(X, m, rows, data, true);
  backend_.loss_and_accumulate(shape_for(weights, true), out, T, d_out_, values_, m,
                               stages_.back().out, totals_, settings_, rows, data);
  count_bins(m);
  backward(X, m, rows, data);
  add_penalties(m, false, true);
}

void Model::train_batch(const float* X, const float* T, int m, const int* rows,
                        int64_t batch_stride, RowWeights weights) {
  gradients(X, T, m, rows, batch_stride, true, weights);
  const OptimizerStep step = optimizer_step(m);
  if (norms_) backend_.gradient_norms(step, pack());
  backend_.optimizer_step(step, pack());
  add_penalties(m, true, false);  // the weights' penalty, from before the update
}

void Model::evaluate_batch(const float* X, const float* T, int m, RowWeights weights) {
  check_batch(m);
  Pack data = pack();
  // every member reads the same rows; not a training step: nothing is counted
  data.data_stride = 0;
  const float* out = forward(X, m, nullptr, data, false);
  backend_.loss_and_accumulate(shape_for(weights, false), out, T, d_out_, values_, m,
                               stages_.back().out, totals_, settings_, nullptr, data);
  count_bins(m);
  if (penalty_partials_) backend_.weight_penalty(optimizer_step(m), pack());
  add_penalties(m, true, true);
}

const float* Model::predict_batch(const float* X, int m) {
  check_batch(m);
  if (members() != 1) throw std::invalid_argument("predict_batch: a model of one member only");
  return forward(X, m, nullptr, pack(), false);  // one member: its rows are the data's own
}

void Model::set_fit(const FitSpec& fit) {
  if (members() != 1) throw std::invalid_argument("set_fit: a model of one member only");
  if (fit.batch_size != specs_[0].fit.batch_size)
    throw std::invalid_argument("set_fit: the batch size is the plan's (" +
                                std::to_string(specs_[0].fit.batch_size) + "), not " +
                                std::to_string(fit.batch_size));
  specs_[0].fit = fit;
}

void Model::reset_totals() {
  backend_.zero_strided(totals_, size_t(stride_), size_t(shape_.totals()) * sizeof(double),
                        specs_.size());
}

std::vector<std::vector<double>> Model::read_totals() {
  const size_t width = size_t(shape_.totals());
  std::vector<double> flat(specs_.size() * width);
  backend_.to_host_strided(flat.data(), width * sizeof(double), totals_, size_t(stride_),
                           width * sizeof(double), specs_.size());
  std::vector<std::vector<double>> totals;
  for (size_t z = 0; z < specs_.size(); ++z)
    totals.emplace_back(flat.begin() + std::ptrdiff_t(z * width),
                        flat.begin() + std::ptrdiff_t((z + 1) * width));
  return totals;
}

std::vector<float> Model::download(const float* flat, int z) {
  std::vector<float> host(static_cast<size_t>(param_count()));
  backend_.to_host(host.data(), member(flat, z, stride_), host.size() * sizeof(float));
  return host;
}

std::vector<float> Model::get_params(int z) { return download(params_, z); }

void Model::get_all_params(std::vector<float>& host) {
  const size_t bytes = size_t(param_count()) * sizeof(float);
  host.resize(specs_.size() * size_t(param_count()));
  backend_.to_host_strided(host.data(), bytes, params_, size_t(stride_), bytes, specs_.size());
}
std::vector<float> Model::get_all_params() {
  std::vector<float> host;
  get_all_params(host);
  return host;
}
std::vector<float> Model::get_gradients(int z) { return download(grads_, z); }

std::vector<float> Model::get_weights(int z) {
  const std::vector<float> params = get_params(z);
  std::vector<float> moving(size_t(moving_count(specs_[0])));
  if (!moving.empty())
    backend_.to_host(moving.data(), member(moving_, z, stride_), moving.size() * sizeof(float));
  std::vector<float> weights;
  size_t at_moving = 0;
  for (const Stage& s :
       stages_) {  // a layer's trainable tensors, then its moving statistics (Keras's order)
    for (const ParamTensor& t : tensors_)
      if (t.layer == s.layer)
        weights.insert(weights.end(), params.begin() + t.begin, params.begin() + t.begin + t.count);
    if (s.kind == LayerKind::batch_normalization) {
      weights.insert(weights.end(), moving.begin() + std::ptrdiff_t(at_moving),
                     moving.begin() + std::ptrdiff_t(at_moving + 2 * size_t(s.out)));
      at_moving += 2 * size_t(s.out);
    }
  }
  return weights;
}

void Model::set_weights(const std::vector<float>& weights, int z) {
  if (int64_t(weights.size()) != weight_count(specs_[0]))
    throw std::invalid_argument("set_weights: " + std::to_string(weights.size()) +
                                " weights for a model of " +
                                std::to_string(weight_count(specs_[0])));
  std::vector<float> params(static_cast<size_t>(param_count())),
      moving(size_t(moving_count(specs_[0])));
  size_t at = 0, at_moving = 0;
  for (const Stage& s : stages_) {
    for (const ParamTensor& t : tensors_)
      if (t.layer == s.layer) {
        std::copy_n(weights.begin() + std::ptrdiff_t(at), t.count, params.begin() + t.begin);
        at += size_t(t.count);
      }
    if (s.kind == LayerKind::batch_normalization) {
      std::copy_n(weights.begin() + std::ptrdiff_t(at), 2 * s.out,
                  moving.begin() + std::ptrdiff_t(at_moving));
      at += 2 * size_t(s.out), at_moving += 2 * size_t(s.out);
    }
  }
  set_params(params, z);
  if (!moving.empty())
    backend_.to_device(member(moving_, z, stride_), moving.data(), moving.size() * sizeof(float));
}

OptimizerState Model::optimizer_state(int z) {
  OptimizerState state;
  for (size_t k = 0; k < optimizer_slots(specs_[0].optimizer).size(); ++k)
    state.slots.push_back(download(slots_[k], z));
  StepState step;
  backend_.to_host(&step, member(step_, z, stride_), sizeof step);
  state.iterations = step.t;
  // step t wrote its product into slot t % 2 (kernels/pack.h)
  state.nadam_product = step.nadam_product[step.t % 2];
  return state;
}

void Model::set_optimizer_state(const OptimizerState& state, int z) {
  const size_t slots = optimizer_slots(specs_[0].optimizer).size();
  if (state.slots.size() != slots || state.iterations < 0)
    throw std::invalid_argument("set_optimizer_state: " + std::to_string(state.slots.size()) +
                                " slots at step " + std::to_string(state.iterations) + " for " +
                                std::to_string(slots) + " slots at a step >= 0");
  for (size_t k = 0; k < slots; ++k)  // all checked before any is written
    if (int64_t(state.slots[k].size()) != param_count())
      throw std::invalid_argument("set_optimizer_state: slot " + std::to_string(k) + " has " +
                                  std::to_string(state.slots[k].size()) + " values for " +
                                  std::to_string(param_count()) + " parameters");
  for (size_t k = 0; k < slots; ++k)
    backend_.to_device(member(slots_[k], z, stride_), state.slots[k].data(),
                       state.slots[k].size() * sizeof(float));
  StepState step;
  backend_.to_host(&step, member(step_, z, stride_), sizeof step);
  step.t = state.iterations;
  step.nadam_product[0] = step.nadam_product[1] = state.nadam_product;  // step t + 1 reads either
  backend_.to_device(member(step_, z, stride_), &step, sizeof step);
}

void Model::stop(int z) {
  const int32_t stopped = 1;
  backend_.to_device(&member(step_, z, stride_)->stopped, &stopped, sizeof stopped);
}

void Model::resume(int z) {
  const int32_t stopped = 0;
  backend_.to_device(&member(step_, z, stride_)->stopped, &stopped, sizeof stopped);
}

void Model::set_learning_rate(float rate, int z) {
  backend_.to_device(&member(settings_, z, stride_)->optimizer.learning_rate, &rate, sizeof rate);
  learning_rates_[size_t(z)] = rate;
}

std::vector<std::byte> Model::snapshot() {
  std::vector<std::byte> host(plan_.total() * specs_.size());
  backend_.to_host(host.data(), arena_, host.size());
  return host;
}

void Model::restore(const std::vector<std::byte>& snapshot) {
  if (snapshot.size() != plan_.total() * specs_.size())
    throw std::logic_error(std::string("model restore: a snapshot of ") +
                           std::to_string(snapshot.size()) + " bytes for an arena of " +
                           std::to_string(plan_.total() * specs_.size()));
  backend_.to_device(arena_, snapshot.data(), snapshot.size());
}

void Model::set_params(const std::vector<float>& params, int z) {
  backend_.to_device(member(params_, z, stride_), params.data(), params.size() * sizeof(float));
}

}  // namespace mf
