// A packed launch against its members' single launches: every operation of a training step, run
// once for a pack of 3 and once per member with the member's pointers, must leave every buffer the
// same, bit for bit, on the CPU backend and on the CUDA backend (host execution here, under TSan
// too, and the GPU in gpu_tests). Members get different inputs, so a kernel that mixes members up,
// or reads member 0's buffer for all, fails.
#include <cstring>

#include "kernels/pack.h"
#include "nn/settings.h"
#include "tests/parity/backend_pair.h"
#include "tests/parity/device_under_test.h"

namespace mf::test {
namespace {

constexpr int kMembers = 3;
constexpr int64_t kStride = 64 * 1024;       // bytes between members' copies of the model's buffers
constexpr int64_t kBatchStride = 96 * 1024;  // of their batches and orders: another stride, so a
                                             // kernel that took one for the other fails
constexpr int kDataRows = 400, kInputs = 7, kUnits = 5, kClasses = 4;

// Buffers on a backend, each with kMembers copies kStride bytes apart, filled from a seed per
// member.
class PackBuffers {
 public:
  explicit PackBuffers(Backend& backend) : backend_(backend) {}
  ~PackBuffers() {
    for (auto& [p, bytes] : blocks_) backend_.upstream().deallocate(p, bytes);
  }
  // n floats per member in [lo, hi), `stride` bytes apart.
  float* floats(size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f,
                int64_t stride = kStride) {
    auto* p = static_cast<float*>(take(stride * kMembers));
    for (int z = 0; z < kMembers; ++z)
      upload(member(p, z, stride), random_vector(n, seed + 100 * z, lo, hi));
    return p;
  }
  // n ints per member in [0, bound), kBatchStride bytes apart (the members' orders).
  int* ints(size_t n, uint64_t seed, int bound) {
    auto* p = static_cast<int*>(take(kBatchStride * kMembers));
    for (int z = 0; z < kMembers; ++z) {
      std::vector<int> host(n);
      Rng rng(seed + 100 * z);
      for (int& v : host) v = int(rng.uniform(0.f, float(bound))) % bound;
      upload(member(p, z, kBatchStride), host);
    }
    return p;
  }
  // Every member's step state: step 2 + z, its batch from row 5 + 7z of its order.
  StepState* steps() {
    auto* p = static_cast<StepState*>(take(kStride * kMembers));
    for (int z = 0; z < kMembers; ++z) {
      StepState state;
      // its padding too: the buffers are compared byte for byte
      std::memset(static_cast<void*>(&state), 0, sizeof state);
      state.t = 2 + z, state.first_row = 5 + 7 * z,
      state.nadam_product[0] = state.nadam_product[1] = 1.f;
      upload(member(p, z, kStride), std::vector<StepState>{state});
    }
    return p;
  }
  // Every member's settings: its own seed, learning rate, betas, momentum, label smoothing. Read
  // only, and not compared (the struct's padding bytes are whatever they were).
  MemberSettings* settings() {
    auto* p = static_cast<MemberSettings*>(take(kStride * kMembers, false));
    for (int z = 0; z < kMembers; ++z) {
      ModelSpec spec;
      spec.seed = 11 + uint64_t(z);
      spec.optimizer.learning_rate = 1e-3f * float(z + 1),
      spec.optimizer.beta_2 = 0.999 - 0.001 * z;
      spec.optimizer.momentum = 0.5f * float(z);
      spec.loss.label_smoothing = 0.1 * z;
      upload(member(p, z, kStride), std::vector<MemberSettings>{member_settings(spec)});
    }
    return p;
  }
  // Every member's layer settings (three layers): its own dropout rate, batch normalization and
  // regularizer factors.
  LayerSettings* layers() {
    auto* p = static_cast<LayerSettings*>(take(kStride * kMembers, false));
    for (int z = 0; z < kMembers; ++z) {
      std::vector<LayerSettings> l(3);
      l[0].kernel = {1e-3f * float(z + 1), 1e-2f}, l[0].bias = {0.f, 1e-3f * float(z)};
      l[0].activity = {1e-3f, 1e-3f * float(z + 1)};
      l[1].dropout_rate = 0.1f * float(z + 1), l[1].dropout_scale = 1.f / (1.f - l[1].dropout_rate);
      l[2].momentum = 0.9f + 0.03f * float(z), l[2].one_minus_momentum = 1.f - l[2].momentum,
      l[2].epsilon = 1e-3f;
      upload(member(p, z, kStride), l);
    }
    return p;
  }
  // The parameter tensors of the optimizer's step: 1000 floats as a kernel of 700 and a bias of
  // 300.
  ParamTensor* tensors() {
    auto* p = static_cast<ParamTensor*>(take(kStride * kMembers, false));
    const std::vector<ParamTensor> t = {{0, 700, 0, TensorRole::kernel, 0},
                                        {700, 300, 0, TensorRole::bias, 3}};
    for (int z = 0; z < kMembers; ++z) upload(member(p, z, kStride), t);
    return p;
  }
  // Every compared block's bytes, in order: what the two runs compare.
  std::vector<std::vector<char>> contents() {
    std::vector<std::vector<char>> all;
    for (size_t i = 0; i < blocks_.size(); ++i) {
      if (!compared_[i]) continue;
      auto [p, bytes] = blocks_[i];
      std::vector<char> host(bytes);
      backend_.to_host(host.data(), p, bytes);
      all.push_back(std::move(host));
    }
    return all;
  }

 private:
  void* take(size_t bytes, bool compared = true) {
    void* p = backend_.upstream().allocate(bytes);
    backend_.zero(p, bytes);
    blocks_.emplace_back(p, bytes);
    compared_.push_back(compared);
    return p;
  }
  template <class T>
  void upload(T* at, const std::vector<T>& host) {
    backend_.to_device(at, host.data(), host.size() * sizeof(T));
    backend_.synchronize();
  }
  Backend& backend_;
  std::vector<std::pair<void*, size_t>> blocks_;
  std::vector<bool> compared_;
};

// A batch normalization's buffers as at() gives them: member 0's for the pack, or a member's own.
template <class At>
BatchNormBuffers at_buffers(const BatchNormBuffers& bn, At at) {
  return {bn.layer,
          at(bn.gamma, kStride),
          at(bn.beta, kStride),
          at(bn.moving_mean, kStride),
          at(bn.moving_variance, kStride),
          at(bn.mean, kStride),
          at(bn.inverse, kStride),
          at(bn.dgamma, kStride),
          at(bn.dbeta, kStride)};
}

// Runs op(pack, at) once for the whole pack, or once per member as a pack of one (with its own step
// state), with at(p, stride) giving the member's pointer.
template <class Op>
void apply(bool packed, const Pack& pack, Op op) {
  if (packed) return op(pack, [](auto* p, int64_t) { return p; });
  for (int z = 0; z < pack.count; ++z)
    op(Pack{.step = member(pack.step, z, pack.stride), .counts_step = pack.counts_step},
       [z](auto* p, int64_t stride) { return member(p, z, stride); });
}

// Every operation of a training step and the epoch's, on buffers seeded alike: packed or member by
// member. Returns every buffer's bytes afterwards.
std::vector<std::vector<char>> run_step(Backend& b, bool packed) {
  PackBuffers buf(b);
  const bool by_index = b.fuses_gather();
  // The data set is shared: one copy (member 0's) that every member reads.
  float* data_x = buf.floats(size_t(kDataRows) * kInputs, 1);
  float* data_t = buf.floats(kDataRows, 2, 0.f, float(kClasses));
  for (int64_t i = 0; i < kDataRows; ++i) {  // class indices as floats
    float label = float(int64_t(i * 7 + 3) % kClasses);
    b.to_device(data_t + i, &label, sizeof label);
    b.synchronize();
  }
  int* order = buf.ints(kDataRows, 3, kDataRows);
  float* batch_x = buf.floats(size_t(300) * kInputs, 4, -1.f, 1.f, kBatchStride);
  float* batch_t = buf.floats(300, 5, -1.f, 1.f, kBatchStride);
  float *W = buf.floats(size_t(kInputs) * kUnits, 6), *bias = buf.floats(kUnits, 7);
  float *Y = buf.floats(size_t(300) * kUnits, 8),
        *below = buf.floats(size_t(300) * kInputs, 9, 0.05f, 0.95f);
  float *dZ = buf.floats(size_t(300) * kUnits, 10), *dX = buf.floats(size_t(300) * kInputs, 11);
  float *dW = buf.floats(size_t(kInputs) * kUnits, 12), *db = buf.floats(kUnits, 13);
  float *out = buf.floats(size_t(300) * kClasses, 14, -3.f, 3.f),
        *d_out = buf.floats(size_t(300) * kClasses, 15);
  float* values = buf.floats(600, 16);
  auto* totals = reinterpret_cast<double*>(buf.floats(4, 18));
  float *w = buf.floats(1000, 19), *g = buf.floats(1000, 20),
        *m1 = buf.floats(1000, 21, -0.1f, 0.1f), *v1 = buf.floats(1000, 22, 0.f, 0.1f);
  float *dropped = buf.floats(size_t(300) * kUnits, 23),
        *normed = buf.floats(size_t(300) * kUnits, 24);
  float *gamma = buf.floats(kUnits, 25, 0.5f, 1.5f), *beta = buf.floats(kUnits, 26),
        *moving = buf.floats(2 * kUnits, 27);
  float *stats = buf.floats(2 * kUnits, 28), *dgamma = buf.floats(kUnits, 29),
        *dbeta = buf.floats(kUnits, 30);
  auto* partials = reinterpret_cast<double*>(buf.floats(40, 31));
  MemberSettings* settings = buf.settings();
  LayerSettings* layers = buf.layers();
  ParamTensor* tensors = buf.tensors();
  StepState* step = buf.steps();  // a training step's: rows from first_row on, counted, moved on
  b.zero(totals, kStride * kMembers);
  b.zero(partials, kStride * kMembers);
  const BatchNormBuffers bn{2,     gamma,          beta,   moving, moving + kUnits,
                            stats, stats + kUnits, dgamma, dbeta};
  const LossShape classes{
      Loss::sparse_categorical_crossentropy, false, 1, {1, {Metric::sparse_categorical_accuracy}}};
  const LossShape regression{
      Loss::huber, false, kClasses, {2, {Metric::mean_absolute_error, Metric::binary_accuracy}}};

  const Pack model{kMembers, kStride, kStride, 0, step, true};
  // The first layer's input: the data set by index, where the backend reads it so, else each
  // member's gathered batch.
  const Pack input{kMembers, kStride, by_index ? 0 : kBatchStride, by_index ? kBatchStride : 0,
                   step,     true};
  const float* X = by_index ? data_x : batch_x;
  const float* T = by_index ? data_t : batch_t;
  const int* rows = by_index ? order : nullptr;

  apply(packed, {kMembers, kStride, 0, kBatchStride}, [&](const Pack& p, auto at) {
    b.shuffle(at(order, kBatchStride), kDataRows, at(settings, kStride), 2, p);
  });
  apply(packed, {kMembers, kStride, kBatchStride, kBatchStride, step}, [&](const Pack& p, auto at) {
    b.gather(data_x, kInputs, at(order, kBatchStride), 37, at(batch_x, kBatchStride), p);
    b.gather(data_t, 1, at(order, kBatchStride), 300, at(batch_t, kBatchStride), p);
  });
  for (int m : {37, 300}) {  // the loss pass with its accumulation in one launch, and in two
    apply(packed, input, [&](const Pack& p, auto at) {
      const int64_t data = by_index ? 0 : kBatchStride;
      b.dense_forward(at(X, data), at(W, kStride), at(bias, kStride), at(Y, kStride), nullptr, m,
                      kInputs, kUnits, Activation::relu, at(rows, kBatchStride), p);
      b.loss_and_accumulate(classes, at(out, kStride), at(T, data), at(d_out, kStride),
                            at(values, kStride), m, kClasses, at(totals, kStride),
                            at(settings, kStride), at(rows, kBatchStride), p);
      b.dense_backward_params(at(X, data), at(dZ, kStride), at(dW, kStride), at(db, kStride), m,
                              kInputs, kUnits, at(rows, kBatchStride), p);
    });
  }
  apply(packed, model, [&](const Pack& p, auto at) {
    b.dense_backward_input(at(dZ, kStride), at(W, kStride), at(dX, kStride), 300, kInputs, kUnits,
                           {Activation::sigmoid, at(below, kStride), nullptr}, p);
    b.activation_backward(at(dX, kStride), at(dX, kStride), 300 * kInputs,
                          {Activation::tanh, at(below, kStride), nullptr},
                          {Activation::gelu, at(below, kStride), at(dX, kStride)}, p);
    b.loss(regression, at(out, kStride), at(below, kStride), at(d_out, kStride),
           at(values, kStride), 300, kClasses, at(settings, kStride), p);
    b.accumulate(at(values, kStride), 3, 300, at(totals, kStride), p);
    b.dropout_forward(at(Y, kStride), at(dropped, kStride), 300, kUnits, 1, at(settings, kStride),
                      at(layers, kStride), p);
    b.dropout_backward(at(dZ, kStride), at(dZ, kStride), 300, kUnits, 1, at(settings, kStride),
                       at(layers, kStride), {Activation::relu, at(Y, kStride), nullptr}, p);
    for (const bool training : {true, false})
      b.batch_norm_forward(at(Y, kStride), at(normed, kStride), 300, kUnits, at_buffers(bn, at),
                           at(layers, kStride), training, p);
    b.batch_norm_backward(at(Y, kStride), at(dZ, kStride), at(dZ, kStride), 300, kUnits,
                          at_buffers(bn, at), {Activation::elu, at(Y, kStride), nullptr}, p);
    b.activity_penalty(at(Y, kStride), 300, kUnits, 0, at(layers, kStride), at(partials, kStride),
                       10, p);
    b.activity_backward(at(dZ, kStride), at(dZ, kStride), 300, kUnits, 0, at(layers, kStride),
                        {Activation::relu, at(Y, kStride), nullptr}, p);
    OptimizerStep adam;
    adam.kind = OptimizerKind::adam, adam.regularized = true, adam.clip = ClipKind::global_norm;
    adam.params = at(w, kStride), adam.grads = at(g, kStride), adam.slot[0] = at(m1, kStride);
    adam.slot[1] = at(v1, kStride), adam.count = 1000;
    adam.tensors = at(tensors, kStride), adam.tensor_count = 2, adam.blocks = 5;
    adam.settings = at(settings, kStride), adam.layers = at(layers, kStride);
    adam.norm_partials = at(partials, kStride) + 10,
    adam.norms = reinterpret_cast<float*>(at(partials, kStride) + 20);
    adam.penalty = at(partials, kStride) + 30, adam.batch_rows = 37;
    b.gradient_norms(adam, p);
    b.optimizer_step(adam, p);
    b.add_penalty(adam.penalty, 5, at(partials, kStride), 10, 37, at(totals, kStride), p);
    OptimizerStep sgd = adam;
    sgd.kind = OptimizerKind::sgd, sgd.momentum_slot = true, sgd.slot[0] = at(v1, kStride),
    sgd.clip = ClipKind::none;
    b.optimizer_step(sgd, p);
  });
  return buf.contents();
}

void expect_pack_equals_members(Backend& backend) {
  const auto packed = run_step(backend, true), members = run_step(backend, false);
  ASSERT_EQ(packed.size(), members.size());
  for (size_t i = 0; i < packed.size(); ++i)
    EXPECT_TRUE(packed[i] == members[i]) << backend.name() << ": buffer " << i << " differs";
}

TEST(PackParity, OneLaunchEqualsEachMembersLaunchOnTheCpu) {
  CpuBackend cpu;
  expect_pack_equals_members(cpu);
}

TEST(PackParity, OneLaunchEqualsEachMembersLaunchOnTheDevice) {
  std::string why;
  std::unique_ptr<Backend> device = make_device_under_test(why);
  if (!device) GTEST_SKIP() << why;
  expect_pack_equals_members(*device);
}

}  // namespace
}  // namespace mf::test
