#include "nn/model.h"

#include <algorithm>
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

namespace {

}  // namespace

void check_plan_fits(const ModelSpec& spec, const MemoryPlan& p) {
  if (p.total() > spec.memory.limit_bytes)
    throw OutOfMemory("model '" + spec.name + "' needs " + format_bytes_exact(p.total()) + " at batch size " +
                      std::to_string(spec.fit.batch_size) + " (" + p.describe() + ") but its memory.limit is " +
                      format_bytes_exact(spec.memory.limit_bytes) + " (mode " + to_string(spec.memory.mode) +
                      "); raise memory.limit or lower fit.batch_size");
}

namespace {

MemoryPlan checked_plan(const ModelSpec& spec) {
  MemoryPlan p = Model::plan(spec);
  check_plan_fits(spec, p);
  return p;
}

}  // namespace

Model::Model(const ModelSpec& spec, Backend& backend)
    : spec_(spec),
      backend_(backend),
      plan_(checked_plan(spec)),
      pool_(spec.name, spec.memory.limit_bytes, spec.memory.mode, backend.upstream()) {
  int in = spec.input;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec& l = spec.layers[i];
    const bool last = i + 1 == spec.layers.size();
    layers_.push_back({in, l.units, last && fused_output(spec.loss) ? Activation::linear : l.activation});
    in = l.units;
  }
  // Carve the arena by walking the plan's table; the cursor must end exactly at the arena's end.
  arena_ = pool_.allocate(plan_.total());
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

  // Keras initialisation: Glorot-uniform kernels, zero biases, drawn on the host
  // so that every backend starts from the same numbers.
  std::vector<float> init(static_cast<size_t>(param_count()), 0.f);
  Rng rng = Rng(spec.seed).fork(0);
  float* at = init.data();
  for (const Layer& layer : layers_) {
    const float limit = std::sqrt(6.f / float(layer.in + layer.out));
    for (int64_t j = 0; j < int64_t(layer.in) * layer.out; ++j) at[j] = rng.uniform(-limit, limit);
    at += int64_t(layer.in + 1) * layer.out;
  }
  set_params(init);
  if (opt_m_) backend_.zero(opt_m_, floats(param_count()));
  if (opt_v_) backend_.zero(opt_v_, floats(param_count()));
  reset_totals();
}

Model::~Model() { pool_.deallocate(arena_); }

int Model::target_cols() const {
  return mf::target_cols(spec_.loss, spec_.outputs());
}

void Model::forward(const float* X, int m, const int* indices) {
  const float* input = X;
  const int* rows = indices;  // the first layer's only
  for (const Layer& l : layers_) {
    backend_.dense_forward(input, l.W, l.b, l.Y, m, l.in, l.out, l.act, rows);  // (m, out)
    input = l.Y;
    rows = nullptr;
  }
}

void Model::loss_and_accumulate(const float* T, int m, const int* indices) {
  const Layer& last = layers_.back();
  backend_.loss_and_accumulate(spec_.loss, last.Y, T, d_out_, row_loss_, row_correct_, m, last.out, totals_, indices);
}

void Model::backward(const float* X, int m, const int* indices) {
  const Layer& last = layers_.back();
  if (last.act != Activation::linear)  // mse through a non-linear output
    backend_.activation_backward(last.Y, d_out_, d_out_, int64_t(m) * last.out, last.act);
  float *dZ = d_out_, *dX = d_next_;  // dZ: (m, out) gradient at layer i's pre-activation
  for (size_t i = layers_.size(); i-- > 0;) {
    const Layer& l = layers_[i];
    const float* input = i == 0 ? X : layers_[i - 1].Y;
    backend_.dense_backward_params(input, dZ, l.dW, l.db, m, l.in, l.out, i == 0 ? indices : nullptr);
    if (i == 0) break;  // no gradient for the data
    const Layer& below = layers_[i - 1];
    backend_.dense_backward_input(dZ, l.W, dX, m, l.in, l.out, below.Y, below.act);  // through below's activation
    std::swap(dZ, dX);
  }
}

void Model::optimizer_step() {
  const OptimizerSpec& o = spec_.optimizer;
  ++step_;
  if (o.kind == OptimizerKind::adam) {
    backend_.adam(params_, grads_, opt_m_, opt_v_, param_count(),
                  keras_adam_step(o.learning_rate, o.beta_1, o.beta_2, o.epsilon, step_));
  } else {
    // Without momentum the velocity is always -lr*g: the grads buffer serves as scratch.
    float* velocity = opt_m_ ? opt_m_ : grads_;
    backend_.sgd(params_, grads_, velocity, param_count(), o.learning_rate, o.momentum);
  }
}

void Model::check_batch(int m) const {
  if (m < 1 || m > spec_.fit.batch_size)
    throw std::logic_error("batch of " + std::to_string(m) + " rows for buffers of " +
                           std::to_string(spec_.fit.batch_size));
}

void Model::compute_gradients(const float* X, const float* T, int m, const int* indices) {
  check_batch(m);
  forward(X, m, indices);
  loss_and_accumulate(T, m, indices);
  backward(X, m, indices);
}

void Model::train_batch(const float* X, const float* T, int m, const int* indices) {
  compute_gradients(X, T, m, indices);
  optimizer_step();
}

void Model::evaluate_batch(const float* X, const float* T, int m) {
  check_batch(m);
  forward(X, m);
  loss_and_accumulate(T, m);
}

void Model::reset_totals() { backend_.zero(totals_, 2 * sizeof(double)); }

std::pair<double, double> Model::read_totals() {
  double host[2];
  backend_.to_host(host, totals_, sizeof host);
  return {host[0], host[1]};
}

std::vector<float> Model::download(const float* flat) {
  std::vector<float> host(static_cast<size_t>(param_count()));
  backend_.to_host(host.data(), flat, host.size() * sizeof(float));
  return host;
}

std::vector<float> Model::get_params() { return download(params_); }
std::vector<float> Model::get_gradients() { return download(grads_); }

void Model::set_params(const std::vector<float>& params) {
  backend_.to_device(params_, params.data(), params.size() * sizeof(float));
}

}  // namespace mf
