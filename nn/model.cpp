#include "nn/model.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "runtime/rng.h"
#include "runtime/bytes.h"
#include "runtime/error.h"

namespace mf {
namespace {

bool fused_output(Loss loss) { return loss != Loss::mse; }  // sigmoid/softmax applied inside the loss pass

int widest_layer(const ModelSpec& spec) {
  int widest = 0;
  for (const LayerSpec& l : spec.layers) widest = std::max(widest, l.units);
  return widest;
}

size_t floats(int64_t n) { return MemoryPool::aligned(size_t(n) * sizeof(float)); }

}  // namespace

int64_t Model::param_count(const ModelSpec& spec) {
  int64_t count = 0, in = spec.input;
  for (const LayerSpec& l : spec.layers) count += (in + 1) * l.units, in = l.units;
  return count;
}

template <class Add>
void Model::walk_layout(const ModelSpec& spec, Model* self, Add add) {
  const int64_t B = spec.fit.batch_size, P = param_count(spec);
  auto slot = [self](auto member) { return self ? &(self->*member) : nullptr; };
  add("parameters", floats(P), slot(&Model::params_));
  add("gradients", floats(P), slot(&Model::grads_));  // of the parameters
  if (spec.optimizer.kind == OptimizerKind::adam) {
    add("adam m", floats(P), slot(&Model::opt_m_));
    add("adam v", floats(P), slot(&Model::opt_v_));
  } else if (spec.optimizer.momentum > 0) {
    add("sgd velocity", floats(P), slot(&Model::opt_m_));
  }
  for (size_t i = 0; i < spec.layers.size(); ++i)  // (B, units): what backward needs of the forward pass
    add("layer " + std::to_string(i + 1) + " output", floats(B * spec.layers[i].units),
        self ? &self->layers_[i].Y : nullptr);
  // Backward's dY of one layer and dX of the next, swapped layer by layer: (B, widest layer) each.
  add("backward dY", floats(B * widest_layer(spec)), slot(&Model::d_out_));
  add("backward dX", floats(B * widest_layer(spec)), slot(&Model::d_next_));
  add("row losses", floats(B), slot(&Model::row_loss_));
  add("row accuracies", floats(B), slot(&Model::row_correct_));
  add("loss totals", MemoryPool::aligned(2 * sizeof(double)), slot(&Model::totals_));
  add("member settings", MemoryPool::aligned(sizeof(MemberSettings)), slot(&Model::settings_));
  add("step state", MemoryPool::aligned(sizeof(StepState)), slot(&Model::step_));
}

MemoryPlan Model::plan(const ModelSpec& spec) {
  MemoryPlan p;
  walk_layout(spec, nullptr,
              [&](std::string name, size_t bytes, auto*) { p.parts.push_back({std::move(name), bytes}); });
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
  std::string text;
  for (const PlanPart& part : parts) text += (text.empty() ? "" : ", ") + part.name + " " + format_bytes(part.bytes);
  return text;
}

void check_plan_fits(const ModelSpec& spec, const MemoryPlan& p) {
  if (p.total() > spec.memory.limit_bytes)
    throw OutOfMemory("model '" + spec.name + "' needs " + format_bytes_exact(p.total()) + " at batch size " +
                      std::to_string(spec.fit.batch_size) + " (" + p.describe() + ") but its memory.limit is " +
                      format_bytes_exact(spec.memory.limit_bytes) + " (mode " + to_string(spec.memory.mode) +
                      "); raise memory.limit or lower fit.batch_size");
}

std::string pack_key(const ModelSpec& spec) {
  const OptimizerSpec& o = spec.optimizer;
  std::string key = std::to_string(spec.input) + " " + to_string(spec.loss) + " " + to_string(o.kind) +
                    (o.kind == OptimizerKind::sgd && o.momentum > 0 ? "+velocity" : "");
  for (const LayerSpec& l : spec.layers) key.append(" ").append(std::to_string(l.units)).append(":").append(to_string(l.activation));
  char fit[160];
  std::snprintf(fit, sizeof fit, " batch %d epochs %d split %.17g shuffle %d pipeline %d/%d%s ", spec.fit.batch_size,
                spec.fit.epochs, spec.fit.validation_split, int(spec.fit.shuffle), spec.pipeline.workers,
                spec.pipeline.prefetch, spec.preprocessing.empty() ? "" : "+preprocessing");
  return key + fit + to_string(spec.memory.mode);
}

MemberSettings member_settings(const ModelSpec& spec) {
  const OptimizerSpec& o = spec.optimizer;
  MemberSettings s = adam_settings(o.learning_rate, o.beta_1, o.beta_2, o.epsilon);
  s.seed = spec.seed;
  s.momentum = o.momentum;
  return s;
}

namespace {

// The pack's members: at least one, all of one pack_key, each plan within its member's cap.
MemoryPlan checked_plan(const std::vector<ModelSpec>& members) {
  if (members.empty()) throw std::invalid_argument("a pack of no models");
  MemoryPlan p = Model::plan(members[0]);
  for (const ModelSpec& spec : members) {
    if (pack_key(spec) != pack_key(members[0]))
      throw std::invalid_argument("models '" + members[0].name + "' and '" + spec.name + "' differ in shape or fit (" +
                                  pack_key(members[0]) + " / " + pack_key(spec) + ") and cannot share a pack");
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

Model::Model(const ModelSpec& spec, Backend& backend) : Model(std::vector<ModelSpec>{spec}, backend) {}

Model::Model(std::vector<ModelSpec> specs, Backend& backend)
    : specs_(std::move(specs)),
      backend_(backend),
      plan_(checked_plan(specs_)),
      stride_(int64_t(plan_.total())),
      pool_(pool_owner(specs_), summed_caps(specs_), specs_[0].memory.mode, backend.upstream()) {
  const ModelSpec& spec = specs_[0];
  int in = spec.input;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec& l = spec.layers[i];
    const bool last = i + 1 == spec.layers.size();
    layers_.push_back({in, l.units, last && fused_output(spec.loss) ? Activation::linear : l.activation});
    in = l.units;
  }
  // Carve member 0's share by walking the plan's table; the cursor must end exactly at its end.
  // Zeroed at once, by the thread that builds the model: every buffer starts defined, and on the cpu
  // its pages are mapped here rather than by the threads of the first step (a pack's members
  // faulting in fresh pages on several threads at once doubled a 512-member pack's start-up).
  arena_ = pool_.allocate(plan_.total() * specs_.size());
  backend_.zero(arena_, plan_.total() * specs_.size());
  std::byte* cursor = static_cast<std::byte*>(arena_);
  walk_layout(spec, this, [&](const std::string&, size_t bytes, auto* slot) {
    *slot = reinterpret_cast<std::remove_pointer_t<decltype(slot)>>(cursor);
    cursor += bytes;
  });
  if (cursor != static_cast<std::byte*>(arena_) + plan_.total())
    throw std::logic_error("model arena: the layout walked " + std::to_string(cursor - static_cast<std::byte*>(arena_)) +
                           " bytes of a plan of " + std::to_string(plan_.total()));
  float *w = params_, *g = grads_;
  for (Layer& layer : layers_) {  // W (in, out) then b (out) per layer, in the flat parameter buffer
    const int64_t kernel = int64_t(layer.in) * layer.out;
    layer.W = w, layer.b = w + kernel, layer.dW = g, layer.db = g + kernel;
    w += kernel + layer.out;
    g += kernel + layer.out;
  }

  for (int z = 0; z < members(); ++z) {
    // Keras initialisation: Glorot-uniform kernels, zero biases, drawn on the host
    // so that every backend starts from the same numbers.
    std::vector<float> init(static_cast<size_t>(param_count()), 0.f);
    Rng rng = Rng(specs_[size_t(z)].seed).fork(0);
    float* at = init.data();
    for (const Layer& layer : layers_) {
      const float limit = std::sqrt(6.f / float(layer.in + layer.out));
      for (int64_t j = 0; j < int64_t(layer.in) * layer.out; ++j) at[j] = rng.uniform(-limit, limit);
      at += int64_t(layer.in + 1) * layer.out;
    }
    set_params(init, z);  // the optimizer's state and the step state start at zero, as the arena
    const MemberSettings settings = member_settings(specs_[size_t(z)]);
    backend_.to_device(member(settings_, z, stride_), &settings, sizeof settings);
  }
  reset_totals();
}

Model::~Model() { pool_.deallocate(arena_); }

PoolStats Model::member_share(int z) const {
  const PoolStats& pack = pool_.stats();
  const size_t cap = specs_[size_t(z)].memory.limit_bytes, count = specs_.size();
  const bool reserves_caps = pool_.mode() == PoolMode::reserve;
  return {cap, reserves_caps ? cap : pack.reserved_bytes / count, pack.in_use_bytes / count, pack.peak_bytes / count};
}

int Model::target_cols() const {
  return mf::target_cols(specs_[0].loss, specs_[0].outputs());
}

void Model::forward(const float* X, int m, const int* rows, const Pack& data) {
  const float* input = X;
  const int* layer_rows = rows;  // the first layer's only
  Pack layout = data;         // the first layer reads the data; the others the layer below's output
  for (const Layer& l : layers_) {
    backend_.dense_forward(input, l.W, l.b, l.Y, m, l.in, l.out, l.act, layer_rows, layout);  // (m, out)
    input = l.Y;
    layer_rows = nullptr;
    layout = pack();
  }
}

void Model::loss_and_accumulate(const float* T, int m, const int* rows, const Pack& data) {
  const Layer& last = layers_.back();
  backend_.loss_and_accumulate(specs_[0].loss, last.Y, T, d_out_, row_loss_, row_correct_, m, last.out, totals_,
                               rows, data);
}

void Model::backward(const float* X, int m, const int* rows, const Pack& data) {
  const Layer& last = layers_.back();
  if (last.act != Activation::linear)  // mse through a non-linear output
    backend_.activation_backward(last.Y, d_out_, d_out_, int64_t(m) * last.out, last.act, pack());
  float *dZ = d_out_, *dX = d_next_;  // dZ: (m, out) gradient at layer i's pre-activation
  for (size_t i = layers_.size(); i-- > 0;) {
    const Layer& l = layers_[i];
    if (i == 0) {  // no gradient for the data
      backend_.dense_backward_params(X, dZ, l.dW, l.db, m, l.in, l.out, rows, data);
      break;
    }
    const Layer& below = layers_[i - 1];
    backend_.dense_backward_params(below.Y, dZ, l.dW, l.db, m, l.in, l.out, nullptr, pack());
    backend_.dense_backward_input(dZ, l.W, dX, m, l.in, l.out, below.Y, below.act, pack());  // through below's activation
    std::swap(dZ, dX);
  }
}

void Model::optimizer_step(int m) {
  if (specs_[0].optimizer.kind == OptimizerKind::adam) {
    backend_.adam(params_, grads_, opt_m_, opt_v_, param_count(), settings_, m, pack());
  } else {
    // Without momentum the velocity is always -lr*g: the grads buffer serves as scratch.
    float* velocity = opt_m_ ? opt_m_ : grads_;
    backend_.sgd(params_, grads_, velocity, param_count(), settings_, m, pack());
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

void Model::gradients(const float* X, const float* T, int m, const int* rows, int64_t batch_stride,
                      bool counts_step) {
  check_batch(m);
  // The data's layout: the members' own batches, or the data set read by index (or by all alike).
  Pack data = pack();
  data.data_stride = rows ? 0 : batch_stride;
  data.rows_stride = rows ? batch_stride : 0;
  data.counts_step = counts_step;
  forward(X, m, rows, data);
  loss_and_accumulate(T, m, rows, data);
  backward(X, m, rows, data);
}

void Model::train_batch(const float* X, const float* T, int m, const int* rows, int64_t batch_stride) {
  gradients(X, T, m, rows, batch_stride, true);
  optimizer_step(m);
}

void Model::evaluate_batch(const float* X, const float* T, int m) {
  check_batch(m);
  Pack data = pack();
  data.data_stride = 0;   // every member reads the same rows
  data.step = nullptr;    // not a training step: nothing is counted
  forward(X, m, nullptr, data);
  loss_and_accumulate(T, m, nullptr, data);
}

void Model::reset_totals() { backend_.zero_strided(totals_, size_t(stride_), 2 * sizeof(double), specs_.size()); }

std::vector<std::pair<double, double>> Model::read_totals() {
  std::vector<std::pair<double, double>> totals(specs_.size());
  static_assert(sizeof totals[0] == 2 * sizeof(double));
  backend_.to_host_strided(totals.data(), sizeof totals[0], totals_, size_t(stride_), sizeof totals[0], totals.size());
  return totals;
}

std::vector<float> Model::download(const float* flat, int z) {
  std::vector<float> host(static_cast<size_t>(param_count()));
  backend_.to_host(host.data(), member(flat, z, stride_), host.size() * sizeof(float));
  return host;
}

std::vector<float> Model::get_params(int z) { return download(params_, z); }

std::vector<float> Model::get_all_params() {
  const size_t bytes = size_t(param_count()) * sizeof(float);
  std::vector<float> host(specs_.size() * size_t(param_count()));
  backend_.to_host_strided(host.data(), bytes, params_, size_t(stride_), bytes, specs_.size());
  return host;
}
std::vector<float> Model::get_gradients(int z) { return download(grads_, z); }

std::vector<std::byte> Model::snapshot() {
  std::vector<std::byte> host(plan_.total() * specs_.size());
  backend_.to_host(host.data(), arena_, host.size());
  return host;
}

void Model::restore(const std::vector<std::byte>& snapshot) {
  if (snapshot.size() != plan_.total() * specs_.size())
    throw std::logic_error(std::string("model restore: a snapshot of ") + std::to_string(snapshot.size()) +
                           " bytes for an arena of " + std::to_string(plan_.total() * specs_.size()));
  backend_.to_device(arena_, snapshot.data(), snapshot.size());
}

void Model::set_params(const std::vector<float>& params, int z) {
  backend_.to_device(member(params_, z, stride_), params.data(), params.size() * sizeof(float));
}

}  // namespace mf
