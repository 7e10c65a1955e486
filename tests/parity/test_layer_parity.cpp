// The kernels of the layers beside Dense (kernels/activation.cu, dropout.cu, batch_norm.cu,
// regularizers.cu) against the CPU backend on the same inputs: odd sizes, a batch of 1, partial
// blocks. Element-wise math uses the same formulas and matches to 1e-6; batch normalization's
// column sums are added in the same order on both (kernels/layers_cpu.cpp), so its statistics match
// to a float's rounding too.
#include "kernels/kernels.h"
#include "kernels/member_settings.h"
#include "tests/parity/backend_pair.h"
#include "tests/parity/device_under_test.h"

namespace mf::test {
namespace {

class LayerParity : public DeviceTest {
 protected:
  CpuBackend cpu_;
};

const Activation kAll[] = {Activation::linear,    Activation::relu, Activation::sigmoid,
                           Activation::tanh,      Activation::gelu, Activation::swish,
                           Activation::elu,       Activation::selu, Activation::softplus,
                           Activation::leaky_relu};

// An Activation layer: forward, and backward through its own activation and then the one below (a
// Dense's, from its output and pre-activation).
TEST_F(LayerParity, ActivationForwardAndBackward) {
  const int64_t count = 1000;  // four blocks, the last partial
  for (Activation act : kAll)
    for (Activation below : {Activation::linear, Activation::relu, Activation::gelu}) {
      const auto x = random_vector(count, 7, -3.f, 3.f), dy = random_vector(count, 8),
                 bz = random_vector(count, 9);
      std::vector<float> y(count), by(count), dx(count);
      for (int64_t i = 0; i < count; ++i) by[i] = activate(below, bz[i]);
      cpu_.activation_forward(x.data(), y.data(), count, act);
      cpu_.activation_backward(dy.data(), dx.data(), count, {act, y.data(), x.data()},
                               {below, by.data(), bz.data()});
      Buffer<float> X(*device_, x), Y(*device_, nans(count)), dY(*device_, dy), BY(*device_, by),
          BZ(*device_, bz);
      device_->activation_forward(X.get(), Y.get(), count, act);
      expect_close(y, Y.read(), 1e-6f, "Y");
      device_->activation_backward(dY.get(), dY.get(), count, {act, Y.get(), X.get()},
                                   {below, BY.get(), BZ.get()});
      expect_close(dx, dY.read(), 1e-6f, "dX");  // in place, as the model runs it
      if (HasFailure()) FAIL() << "activation " << int(act) << " below " << int(below);
    }
}

// A training step's layer settings and step state for one member.
struct OneMember {
  MemberSettings settings;
  std::vector<LayerSettings> layers;
  StepState step;
};
OneMember dropout_member(float rate, int64_t t) {
  OneMember m;
  m.settings.seed = 1234;
  m.layers.resize(3);
  m.layers[2].dropout_rate = rate, m.layers[2].dropout_scale = float(1.0 / (1.0 - rate));
  m.step.t = t;
  return m;
}

// Dropout's forward and backward (layer 2 of a spec, step 5), with the gradient going on through a
// relu below: the same masks and scale on both backends, in forward and in backward.
TEST_F(LayerParity, Dropout) {
  for (const float rate : {0.f, 0.2f, 0.5f})
    for (const int m : {1, 13, 64}) {
      const int n = 37;
      const int64_t count = int64_t(m) * n;
      const OneMember member = dropout_member(rate, 5);
      const auto x = random_vector(count, 1), dy = random_vector(count, 2),
                 below = random_vector(count, 3, -1.f, 1.f);
      StepState cpu_step = member.step;
      std::vector<float> y(count), dx(count);
      const Pack cpu_pack{.step = &cpu_step, .counts_step = true};
      cpu_.dropout_forward(x.data(), y.data(), m, n, 2, &member.settings, member.layers.data(),
                           cpu_pack);
      cpu_step.t += 1;  // the loss pass between them counts the step
      cpu_.dropout_backward(dy.data(), dx.data(), m, n, 2, &member.settings, member.layers.data(),
                            {Activation::relu, below.data(), nullptr}, cpu_pack);
      Buffer<float> X(*device_, x), Y(*device_, nans(count)), dY(*device_, dy),
          Below(*device_, below);
      Buffer<MemberSettings> Settings(*device_, {member.settings});
      Buffer<LayerSettings> Layers(*device_, member.layers);
      Buffer<StepState> Step(*device_, {member.step});
      const Pack pack{.step = Step.get(), .counts_step = true};
      device_->dropout_forward(X.get(), Y.get(), m, n, 2, Settings.get(), Layers.get(), pack);
      StepState counted = member.step;
      counted.t += 1;
      device_->to_device(Step.get(), &counted, sizeof counted);
      device_->dropout_backward(dY.get(), dY.get(), m, n, 2, Settings.get(), Layers.get(),
                                {Activation::relu, Below.get(), nullptr}, pack);
      expect_close(y, Y.read(), 0.f, "Y");
      expect_close(dx, dY.read(), 0.f, "dX");
      if (HasFailure()) FAIL() << "rate " << rate << " rows " << m;
    }
}

// One BatchNormalization layer's buffers on a backend, for n columns.
struct NormBuffers {
  NormBuffers(Backend& b, int n, bool scale, bool center)
      : gamma(b, random_vector(size_t(n), 41, 0.5f, 1.5f)),
        beta(b, random_vector(size_t(n), 42)),
        moving_mean(b, random_vector(size_t(n), 43)),
        moving_variance(b, random_vector(size_t(n), 44, 0.5f, 2.f)),
        stats(b, nans(2 * size_t(n))),
        dgamma(b, nans(size_t(n))),
        dbeta(b, nans(size_t(n))),
        n(n),
        scale(scale),
        center(center) {}
  BatchNormBuffers buffers() {
    return {1,
            scale ? gamma.get() : nullptr,
            center ? beta.get() : nullptr,
            moving_mean.get(),
            moving_variance.get(),
            stats.get(),
            stats.get() + n,
            scale ? dgamma.get() : nullptr,
            center ? dbeta.get() : nullptr};
  }
  Buffer<float> gamma, beta, moving_mean, moving_variance, stats, dgamma, dbeta;
  int n;
  bool scale, center;
};

// Training forward (its statistics and the moving ones it updates), inference forward, and backward
// (dgamma, dbeta and dX through a tanh below), with and without gamma and beta.
TEST_F(LayerParity, BatchNormalization) {
  std::vector<LayerSettings> layers(2);
  layers[1].momentum = 0.99f, layers[1].one_minus_momentum = float(1.0 - 0.99),
  layers[1].epsilon = 1e-3f;
  for (const bool scaled : {true, false})
    for (const int m : {1, 13, 64})
      for (const int n : {1, 33, 70}) {
        const int64_t count = int64_t(m) * n;
        const auto x = random_vector(count, 1, -2.f, 3.f), dy = random_vector(count, 2),
                   below = random_vector(count, 3);
        NormBuffers on_cpu(cpu_, n, scaled, scaled), on_device(*device_, n, scaled, scaled);
        Buffer<LayerSettings> cpu_layers(cpu_, layers), device_layers(*device_, layers);
        Buffer<float> cX(cpu_, x), cY(cpu_, nans(count)), cI(cpu_, nans(count)), cdY(cpu_, dy),
            cB(cpu_, below);
        Buffer<float> X(*device_, x), Y(*device_, nans(count)), I(*device_, nans(count)),
            dY(*device_, dy), B(*device_, below);
        const Through cpu_below{Activation::tanh, cB.get(), nullptr},
            device_below{Activation::tanh, B.get(), nullptr};
        cpu_.batch_norm_forward(cX.get(), cY.get(), m, n, on_cpu.buffers(), cpu_layers.get(), true);
        cpu_.batch_norm_backward(cX.get(), cdY.get(), cdY.get(), m, n, on_cpu.buffers(), cpu_below);
        cpu_.batch_norm_forward(cX.get(), cI.get(), m, n, on_cpu.buffers(), cpu_layers.get(),
                                false);
        device_->batch_norm_forward(X.get(), Y.get(), m, n, on_device.buffers(),
                                    device_layers.get(), true);
        device_->batch_norm_backward(X.get(), dY.get(), dY.get(), m, n, on_device.buffers(),
                                     device_below);
        device_->batch_norm_forward(X.get(), I.get(), m, n, on_device.buffers(),
                                    device_layers.get(), false);
        expect_close(cY.read(), Y.read(), 1e-5f, "Y (training)");
        expect_close(on_cpu.stats.read(), on_device.stats.read(), 1e-6f, "batch mean and inverse");
        expect_close(on_cpu.moving_mean.read(), on_device.moving_mean.read(), 1e-6f, "moving mean");
        expect_close(on_cpu.moving_variance.read(), on_device.moving_variance.read(), 1e-6f,
                     "moving variance");
        expect_close(cI.read(), I.read(), 1e-5f, "Y (inference)");
        expect_close(cdY.read(), dY.read(), 1e-5f, "dX");
        if (scaled) {
          expect_close(on_cpu.dgamma.read(), on_device.dgamma.read(), 1e-5f, "dgamma");
          expect_close(on_cpu.dbeta.read(), on_device.dbeta.read(), 1e-5f, "dbeta");
        }
        if (HasFailure())
          FAIL() << m << " x " << n << (scaled ? " with gamma and beta" : " without");
      }
}

// An activity regularizer's penalty partials (blocks past the output hold 0), its gradient through
// a sigmoid, and every penalty summed into a batch's loss.
TEST_F(LayerParity, ActivityRegularizerAndPenalty) {
  std::vector<LayerSettings> layers(1);
  layers[0].activity = {1e-3f, 2e-2f};
  const int m = 19, n = 31, blocks = param_blocks(int64_t(32) * n);  // planned for a batch of 32
  const int64_t count = int64_t(m) * n;
  const auto y = random_vector(count, 5, 0.05f, 0.95f), dy = random_vector(count, 6);
  std::vector<double> partials(size_t(blocks), -1);
  std::vector<float> dx(count);
  cpu_.activity_penalty(y.data(), m, n, 0, layers.data(), partials.data(), blocks);
  cpu_.activity_backward(dy.data(), dx.data(), m, n, 0, layers.data(),
                         {Activation::sigmoid, y.data(), nullptr});
  Buffer<float> Y(*device_, y), dY(*device_, dy);
  Buffer<LayerSettings> Layers(*device_, layers);
  Buffer<double> Partials(*device_, std::vector<double>(size_t(blocks), -1));
  device_->activity_penalty(Y.get(), m, n, 0, Layers.get(), Partials.get(), blocks);
  device_->activity_backward(dY.get(), dY.get(), m, n, 0, Layers.get(),
                             {Activation::sigmoid, Y.get(), nullptr});
  const std::vector<double> got = Partials.read();
  for (int b = 0; b < blocks; ++b)
    EXPECT_NEAR(got[b], partials[b], 1e-12 + 1e-9 * std::fabs(partials[b])) << b;
  EXPECT_EQ(got.back(), 0.0) << "a block past the batch's elements";
  expect_close(dx, dY.read(), 1e-6f, "dX");

  const std::vector<double> weights = {0.25, 0.5, 0.125};
  std::vector<double> totals = {2.0, 1.0};
  cpu_.add_penalty(weights.data(), 3, partials.data(), blocks, m, totals.data());
  Buffer<double> W(*device_, weights), Totals(*device_, {2.0, 1.0});
  device_->add_penalty(W.get(), 3, Partials.get(), blocks, m, Totals.get());
  double activity = 0;
  for (double p : partials) activity += p;
  // the batch's rows times the weights' penalty
  EXPECT_NEAR(totals[0], 2.0 + m * 0.875 + activity, 1e-9);
  EXPECT_NEAR(Totals.read()[0], totals[0], 1e-9);
  EXPECT_EQ(Totals.read()[1], 1.0) << "a metric's total is not the loss";
}

}  // namespace
}  // namespace mf::test
