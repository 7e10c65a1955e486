// The optimizer step (kernels/optimizer.cu) against the CPU backend: every optimizer Keras has
// here, with and without its momentum, clipping by value, by each tensor's norm and by the global
// norm, weight decay, a schedule, and the regularizers' gradients and penalty, over three tensors
// of odd sizes (so blocks end inside a tensor). The update is the same function on both; the norms
// and penalties are sums in another order (and the CPU fuses its multiply-adds), so they match to a
// float's rounding.
#include "kernels/kernels.h"
#include "nn/settings.h"
#include "tests/parity/backend_pair.h"
#include "tests/parity/device_under_test.h"

namespace mf::test {
namespace {

class OptimizerParity : public DeviceTest {
 protected:
  CpuBackend cpu_;
};

// The tensors of a Dense(3 -> 300) with its bias and a second Dense's kernel: 900 + 300 + 601
// floats.
const std::vector<ParamTensor> kTensors = [] {
  std::vector<ParamTensor> t = {{0, 900, 0, TensorRole::kernel, 0},
                                {900, 300, 0, TensorRole::bias, 0},
                                {1200, 601, 1, TensorRole::kernel, 0}};
  int block = 0;
  for (ParamTensor& p : t) p.first_block = block, block += param_blocks(p.count);
  return t;
}();
constexpr int64_t kCount = 1801;

struct Case {
  const char* name;
  OptimizerSpec optimizer;
  bool regularized = false;
};

// One optimizer step on `backend` from the same start: the parameters, each slot, the norms and
// the penalty partials it leaves.
struct Outcome {
  std::vector<float> params, slots[3], norms;
  std::vector<double> penalty;
  StepState state;
};

Outcome step_on(Backend& b, const Case& c, int64_t t) {
  ModelSpec spec;
  spec.optimizer = c.optimizer;
  const MemberSettings settings = member_settings(spec);
  std::vector<LayerSettings> layers(2);
  if (c.regularized)
    layers[0].kernel = {1e-3f, 1e-2f}, layers[0].bias = {0.f, 5e-2f},
    layers[1].kernel = {2e-3f, 0.f};
  const int blocks = kTensors.back().first_block + param_blocks(kTensors.back().count);
  Buffer<float> W(b, random_vector(kCount, 1)), G(b, random_vector(kCount, 2));
  std::vector<std::unique_ptr<Buffer<float>>> slots;
  // Slot 0 (a velocity, a second moment) above slot 2's square (a centered RMSprop's average): the
  // root stays real.
  for (int k = 0; k < 3; ++k)
    slots.push_back(std::make_unique<Buffer<float>>(
        b, random_vector(kCount, 3 + k, k == 0 ? 0.1f : 0.f, k == 0 ? 0.2f : 0.1f)));
  Buffer<MemberSettings> Settings(b, {settings});
  Buffer<LayerSettings> Layers(b, layers);
  Buffer<ParamTensor> Tensors(b, kTensors);
  Buffer<double> NormPartials(b, std::vector<double>(size_t(blocks))),
      Penalty(b, std::vector<double>(size_t(blocks)));
  Buffer<float> Norms(b, nans(kTensors.size() + 1));
  StepState state;
  state.t = t, state.first_row = 64, state.nadam_product[(t - 1) & 1] = 0.75f;
  Buffer<StepState> Step(b, {state});

  OptimizerStep s;
  s.kind = c.optimizer.kind, s.clip = c.optimizer.clip,
  s.momentum_slot = momentum_slot(c.optimizer);
  s.amsgrad = c.optimizer.amsgrad, s.regularized = c.regularized;
  s.params = W.get(), s.grads = G.get(), s.count = kCount;
  for (int k = 0; k < 3; ++k) s.slot[k] = slots[size_t(k)]->get();
  s.tensors = Tensors.get(), s.tensor_count = int(kTensors.size()), s.blocks = blocks;
  s.settings = Settings.get(), s.layers = Layers.get();
  s.norm_partials = NormPartials.get(), s.norms = Norms.get(), s.penalty = Penalty.get();
  s.batch_rows = 32;
  const Pack pack{.step = Step.get()};
  if (s.clip == ClipKind::norm || s.clip == ClipKind::global_norm) b.gradient_norms(s, pack);
  b.optimizer_step(s, pack);
  Outcome out{W.read(),
              {slots[0]->read(), slots[1]->read(), slots[2]->read()},
              Norms.read(),
              Penalty.read(),
              Step.read()[0]};
  return out;
}

OptimizerSpec optimizer(OptimizerKind kind) {
  OptimizerSpec o;
  o.kind = kind;
  o.learning_rate = 0.01f;
  return o;
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (OptimizerKind kind :
       {OptimizerKind::adam, OptimizerKind::sgd, OptimizerKind::rmsprop, OptimizerKind::adamw,
        OptimizerKind::adagrad, OptimizerKind::adamax, OptimizerKind::nadam, OptimizerKind::lion})
    all.push_back({to_string(kind), optimizer(kind)});
  Case momentum{"sgd momentum nesterov", optimizer(OptimizerKind::sgd)};
  momentum.optimizer.momentum = 0.9f, momentum.optimizer.nesterov = true;
  Case rms{"rmsprop momentum centered", optimizer(OptimizerKind::rmsprop)};
  rms.optimizer.momentum = 0.5f, rms.optimizer.centered = true;
  Case amsgrad{"adam amsgrad, weight decay", optimizer(OptimizerKind::adam)};
  amsgrad.optimizer.amsgrad = true, amsgrad.optimizer.weight_decay = 0.01f;
  Case clip_value{"adam clipvalue", optimizer(OptimizerKind::adam)};
  clip_value.optimizer.clip = ClipKind::value, clip_value.optimizer.clip_value = 0.3f;
  Case clip_norm{"sgd clipnorm, regularized", optimizer(OptimizerKind::sgd), true};
  clip_norm.optimizer.clip = ClipKind::norm, clip_norm.optimizer.clip_value = 2.f;
  Case global{"rmsprop global_clipnorm", optimizer(OptimizerKind::rmsprop)};
  global.optimizer.clip = ClipKind::global_norm, global.optimizer.clip_value = 3.f;
  Case schedule{"adam cosine decay with warmup, regularized", optimizer(OptimizerKind::adam), true};
  ScheduleSpec cosine;
  cosine.kind = ScheduleKind::cosine_decay, cosine.initial_learning_rate = 0.01,
  cosine.decay_steps = 10;
  cosine.warmup_target = 0.02, cosine.warmup_steps = 2;
  schedule.optimizer.schedule = cosine;
  all.insert(all.end(), {momentum, rms, amsgrad, clip_value, clip_norm, global, schedule});
  return all;
}

TEST_F(OptimizerParity, EveryOptimizerClippingScheduleAndRegularizer) {
  for (const Case& c : cases())
    for (const int64_t t : {1, 3}) {
      const Outcome want = step_on(cpu_, c, t), got = step_on(*device_, c, t);
      expect_close(want.params, got.params, 1e-6f, "params");
      for (int k = 0; k < 3; ++k) expect_close(want.slots[k], got.slots[k], 1e-6f, "slot");
      if (c.optimizer.clip == ClipKind::norm || c.optimizer.clip == ClipKind::global_norm)
        expect_close(want.norms, got.norms, 1e-6f, "norms");
      if (c.regularized) {
        for (size_t b = 0; b < want.penalty.size(); ++b)
          EXPECT_NEAR(got.penalty[b], want.penalty[b], 1e-9 + 1e-7 * std::fabs(want.penalty[b]))
              << "block " << b;
      }
      EXPECT_EQ(got.state.first_row, 96) << "the step moves the batch on by its 32 rows";
      EXPECT_EQ(got.state.t, t) << "the loss pass counts steps, not the optimizer";
      if (c.optimizer.kind == OptimizerKind::nadam) {
        EXPECT_NEAR(got.state.nadam_product[t & 1], want.state.nadam_product[t & 1], 1e-7f);
      }
      if (HasFailure()) FAIL() << c.name << " at step " << t;
    }
}

}  // namespace
}  // namespace mf::test
