// A packed launch against its members' single launches: every operation of a training step, run once
// for a pack of 3 and once per member with the member's pointers, must leave every buffer the same,
// bit for bit, on the CPU backend and on the CUDA backend (host execution here, under TSan too, and
// the GPU in gpu_tests). Members get different inputs, so a kernel that mixes members up, or reads
// member 0's buffer for all, fails.
#include <cstring>

#include "kernels/pack.h"
#include "tests/parity/backend_pair.h"
#include "tests/parity/device_under_test.h"

namespace mf::test {
namespace {

constexpr int kMembers = 3;
constexpr int64_t kStride = 64 * 1024;  // bytes between members' copies of the model's buffers
constexpr int64_t kBatchStride = 96 * 1024;  // of their batches and orders: another stride, so a kernel
                                             // that took one for the other fails
constexpr int kDataRows = 400, kInputs = 7, kUnits = 5, kClasses = 4;

// Buffers on a backend, each with kMembers copies kStride bytes apart, filled from a seed per member.
class PackBuffers {
 public:
  explicit PackBuffers(Backend& backend) : backend_(backend) {}
  ~PackBuffers() {
    for (auto& [p, bytes] : blocks_) backend_.upstream().deallocate(p, bytes);
  }
  // n floats per member in [lo, hi), `stride` bytes apart.
  float* floats(size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f, int64_t stride = kStride) {
    auto* p = static_cast<float*>(take(stride * kMembers));
    for (int z = 0; z < kMembers; ++z) upload(member(p, z, stride), random_vector(n, seed + 100 * z, lo, hi));
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
    for (int z = 0; z < kMembers; ++z) upload(member(p, z, kStride), std::vector<StepState>{{2 + z, 5 + 7 * z}});
    return p;
  }
  // Every member's settings: its own seed, learning rate and momentum. Read only, and not compared
  // (the struct's padding bytes are whatever they were).
  MemberSettings* settings() {
    auto* p = static_cast<MemberSettings*>(take(kStride * kMembers, false));
    for (int z = 0; z < kMembers; ++z) {
      MemberSettings s = adam_settings(1e-3f * float(z + 1), 0.9, 0.999 - 0.001 * z, 1e-7f);
      s.seed = 11 + uint64_t(z), s.momentum = 0.5f * float(z);
      upload(member(p, z, kStride), std::vector<MemberSettings>{s});
    }
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
  float *Y = buf.floats(size_t(300) * kUnits, 8), *below = buf.floats(size_t(300) * kInputs, 9, 0.05f, 0.95f);
  float *dZ = buf.floats(size_t(300) * kUnits, 10), *dX = buf.floats(size_t(300) * kInputs, 11);
  float *dW = buf.floats(size_t(kInputs) * kUnits, 12), *db = buf.floats(kUnits, 13);
  float *out = buf.floats(size_t(300) * kClasses, 14, -3.f, 3.f), *d_out = buf.floats(size_t(300) * kClasses, 15);
  float *row_loss = buf.floats(300, 16), *row_correct = buf.floats(300, 17);
  auto* totals = reinterpret_cast<double*>(buf.floats(4, 18));
  float *w = buf.floats(1000, 19), *g = buf.floats(1000, 20), *m1 = buf.floats(1000, 21, -0.1f, 0.1f),
        *v1 = buf.floats(1000, 22, 0.f, 0.1f);
  MemberSettings* settings = buf.settings();
  StepState* step = buf.steps();  // a training step's: rows from first_row on, counted, moved on
  b.zero(totals, kStride * kMembers);

  const Pack model{kMembers, kStride, kStride, 0, step, true};
  // The first layer's input: the data set by index, where the backend reads it so, else each
  // member's gathered batch.
  const Pack input{kMembers, kStride, by_index ? 0 : kBatchStride, by_index ? kBatchStride : 0, step, true};
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
      b.dense_forward(at(X, data), at(W, kStride), at(bias, kStride), at(Y, kStride), m, kInputs, kUnits,
                      Activation::relu, at(rows, kBatchStride), p);
      b.loss_and_accumulate(Loss::sparse_categorical_crossentropy, at(out, kStride), at(T, data), at(d_out, kStride),
                            at(row_loss, kStride), at(row_correct, kStride), m, kClasses, at(totals, kStride),
                            at(rows, kBatchStride), p);
      b.dense_backward_params(at(X, data), at(dZ, kStride), at(dW, kStride), at(db, kStride), m, kInputs, kUnits,
                              at(rows, kBatchStride), p);
    });
  }
  apply(packed, model, [&](const Pack& p, auto at) {
    b.dense_backward_input(at(dZ, kStride), at(W, kStride), at(dX, kStride), 300, kInputs, kUnits, at(below, kStride),
                           Activation::sigmoid, p);
    b.activation_backward(at(below, kStride), at(dX, kStride), at(dX, kStride), 300 * kInputs, Activation::tanh, p);
    b.loss(Loss::mse, at(out, kStride), at(below, kStride), at(d_out, kStride), at(row_loss, kStride),
           at(row_correct, kStride), 300, kClasses, p);
    b.accumulate(at(row_loss, kStride), at(row_correct, kStride), 300, at(totals, kStride), p);
    b.adam(at(w, kStride), at(g, kStride), at(m1, kStride), at(v1, kStride), 1000, at(settings, kStride), 37, p);
    b.sgd(at(w, kStride), at(g, kStride), at(v1, kStride), 1000, at(settings, kStride), 37, p);
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
