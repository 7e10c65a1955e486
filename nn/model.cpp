#include "nn/model.h"

#include <algorithm>
#include <cmath>

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

MemoryPlan Model::plan(const ModelSpec& spec, int64_t train_rows) {
  const int64_t B = spec.fit.batch_size, P = param_count(spec);
  const int target_cols = spec.loss == Loss::sparse_categorical_crossentropy ? 1 : spec.outputs();
  MemoryPlan p;
  p.params = floats(P);
  p.grads = floats(P);
  const bool sgd = spec.optimizer.kind == OptimizerKind::sgd;
  p.optimizer = sgd ? (spec.optimizer.momentum > 0 ? floats(P) : 0) : 2 * floats(P);
  for (const LayerSpec& l : spec.layers) p.activations += floats(B * l.units);  // Y of each layer
  p.gradients = 2 * floats(B * widest_layer(spec));                            // dY ping-pong
  p.batch = floats(B * spec.input) + floats(B * target_cols);
  p.loss = 2 * floats(B) + MemoryPool::aligned(2 * sizeof(double));
  p.order = MemoryPool::aligned(size_t(train_rows) * sizeof(int));
  return p;
}

std::string MemoryPlan::describe() const {
  return "parameters " + format_bytes(params) + ", gradients " + format_bytes(grads) + ", optimizer state " +
         format_bytes(optimizer) + ", activations " + format_bytes(activations + gradients) + ", batch " +
         format_bytes(batch + loss + order);
}

namespace {

MemoryPlan checked_plan(const ModelSpec& spec, int64_t train_rows) {
  const MemoryPlan p = Model::plan(spec, train_rows);
  if (p.total() > spec.memory.limit_bytes)
    throw OutOfMemory("model '" + spec.name + "' needs " + format_bytes_exact(p.total()) + " at batch size " +
                      std::to_string(spec.fit.batch_size) + " (" + p.describe() + ") but its memory.limit is " +
                      format_bytes_exact(spec.memory.limit_bytes) + "; raise memory.limit or lower fit.batch_size");
  return p;
}

}  // namespace

Model::Model(const ModelSpec& spec, Backend& backend, int64_t train_rows)
    : spec_(spec),
      backend_(backend),
      plan_(checked_plan(spec, train_rows)),
      pool_(spec.name, spec.memory.limit_bytes, spec.memory.mode, backend.memory()) {
  const MemoryPlan& p = plan_;
  arena_ = pool_.allocate(p.total());
  auto* cursor = static_cast<std::byte*>(arena_);
  auto carve = [&](size_t bytes) {
    void* at = cursor;
    cursor += bytes;
    return at;
  };
  const int64_t B = spec.fit.batch_size;
  params_ = static_cast<float*>(carve(p.params));
  grads_ = static_cast<float*>(carve(p.grads));
  if (p.optimizer) {
    opt_m_ = static_cast<float*>(carve(floats(param_count())));
    if (spec.optimizer.kind == OptimizerKind::adam) opt_v_ = static_cast<float*>(carve(floats(param_count())));
  }
  float *w = params_, *g = grads_;
  int in = spec.input;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec& l = spec.layers[i];
    const bool last = i + 1 == spec.layers.size();
    const Activation act = last && fused_output(spec.loss) ? Activation::linear : l.activation;
    layers_.push_back({in, l.units, act, w, w + int64_t(in) * l.units, g, g + int64_t(in) * l.units,
                       static_cast<float*>(carve(floats(B * l.units)))});
    w += int64_t(in + 1) * l.units;
    g += int64_t(in + 1) * l.units;
    in = l.units;
  }
  d_out_ = static_cast<float*>(carve(floats(B * widest_layer(spec))));
  d_next_ = static_cast<float*>(carve(floats(B * widest_layer(spec))));
  x_batch_ = static_cast<float*>(carve(floats(B * spec.input)));
  y_batch_ = static_cast<float*>(carve(floats(B * target_cols())));
  row_loss_ = static_cast<float*>(carve(floats(B)));
  row_correct_ = static_cast<float*>(carve(floats(B)));
  totals_ = static_cast<double*>(carve(MemoryPool::aligned(2 * sizeof(double))));
  order_ = static_cast<int*>(carve(p.order));

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
  return spec_.loss == Loss::sparse_categorical_crossentropy ? 1 : spec_.outputs();
}

void Model::forward(const float* X, int m) {
  const float* input = X;
  for (const Layer& l : layers_) {
    backend_.dense_forward(input, l.W, l.b, l.Y, m, l.in, l.out, l.act);  // (m, out)
    input = l.Y;
  }
}

void Model::loss_and_accumulate(const float* T, int m) {
  const Layer& last = layers_.back();
  backend_.loss(spec_.loss, last.Y, T, d_out_, row_loss_, row_correct_, m, last.out);
  backend_.accumulate(row_loss_, row_correct_, m, totals_);
}

void Model::backward(const float* X, int m) {
  const Layer& last = layers_.back();
  if (last.act != Activation::linear)  // mse through a non-linear output
    backend_.activation_backward(last.Y, d_out_, d_out_, int64_t(m) * last.out, last.act);
  float *dZ = d_out_, *dX = d_next_;  // dZ: (m, out) gradient at layer i's pre-activation
  for (size_t i = layers_.size(); i-- > 0;) {
    const Layer& l = layers_[i];
    const float* input = i == 0 ? X : layers_[i - 1].Y;
    backend_.dense_backward_params(input, dZ, l.dW, l.db, m, l.in, l.out);
    if (i == 0) break;  // no gradient for the data
    const Layer& below = layers_[i - 1];
    backend_.dense_backward_input(dZ, l.W, dX, m, l.in, l.out);
    backend_.activation_backward(below.Y, dX, dX, int64_t(m) * below.out, below.act);
    std::swap(dZ, dX);
  }
}

void Model::optimizer_step() {
  const OptimizerSpec& o = spec_.optimizer;
  ++step_;
  if (o.kind == OptimizerKind::adam) {
    const double t = double(step_);
    const float alpha =
        float(o.learning_rate * std::sqrt(1.0 - std::pow(o.beta_2, t)) / (1.0 - std::pow(o.beta_1, t)));
    backend_.adam(params_, grads_, opt_m_, opt_v_, param_count(), AdamStep{alpha, o.beta_1, o.beta_2, o.epsilon});
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

void Model::compute_gradients(const float* X, const float* T, int m) {
  check_batch(m);
  forward(X, m);
  loss_and_accumulate(T, m);
  backward(X, m);
}

void Model::train_batch(const float* X, const float* T, int m) {
  compute_gradients(X, T, m);
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
