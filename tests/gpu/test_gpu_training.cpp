// GPU-only checks: the cuBLAS and cuDNN reference paths against the CPU backend, and a
// 3-epoch Fashion-MNIST training on cuda against cpu. Without a GPU they skip
// and say why.
#include <filesystem>

#include "backends/cuda/cuda_backend.h"
#include "data/dataset.h"
#include "nn/fit.h"
#include "runtime/device.h"
#include "runtime/error.h"
#include "tests/loss_shapes.h"
#include "tests/parity/backend_pair.h"

namespace mf::test {
namespace {

// A backend on device 0 with those products and activations; null, with why, where there is no
// device or the library a reference path loads (cuBLAS, cuDNN) cannot be loaded: a machine without
// them skips those checks, it does not fail the hand-written kernels' suite.
std::unique_ptr<Backend> gpu_backend(GemmImpl gemm, std::string& why,
                                     ActivationImpl activations = ActivationImpl::ours) {
  const DeviceQuery query = query_devices();
  if (query.devices.empty()) {
    why = "no CUDA device (" + query.why_none + ")";
    return nullptr;
  }
  try {
    if (gemm == GemmImpl::cublas) gpu::cublas_library();
#if defined(MF_HAVE_CUDNN)
    if (activations == ActivationImpl::cudnn) gpu::cudnn_library();
#endif
  } catch (const UserError& e) {
    why = e.what();
    return nullptr;
  }
  return gpu::make_cuda_backend({0, gemm, activations});
}

TEST(GpuCublas, ProductsMatchTheCpuBackend) {
  std::string why;
  auto device = gpu_backend(GemmImpl::cublas, why);
  if (!device) GTEST_SKIP() << why;
  CpuBackend cpu;
  const int m = 70, k = 100, n = 130;
  const auto x = random_vector(size_t(m) * k, 1), w = random_vector(size_t(k) * n, 2),
             b = random_vector(n, 3), dz = random_vector(size_t(m) * n, 4);
  std::vector<float> y(size_t(m) * n), dx(size_t(m) * k), dw(size_t(k) * n), db(n);
  cpu.dense_forward(x.data(), w.data(), b.data(), y.data(), nullptr, m, k, n, Activation::tanh);
  cpu.dense_backward_input(dz.data(), w.data(), dx.data(), m, k, n);
  cpu.dense_backward_params(x.data(), dz.data(), dw.data(), db.data(), m, k, n);
  Buffer<float> X(*device, x), W(*device, w), B(*device, b), dZ(*device, dz),
      Y(*device, nans(y.size())), dX(*device, nans(dx.size())), dW(*device, nans(dw.size())),
      dB(*device, nans(db.size()));
  device->dense_forward(X.get(), W.get(), B.get(), Y.get(), nullptr, m, k, n, Activation::tanh);
  device->dense_backward_input(dZ.get(), W.get(), dX.get(), m, k, n);
  device->dense_backward_params(X.get(), dZ.get(), dW.get(), dB.get(), m, k, n);
  // cuBLAS sums in its own order (no TF32 for SGEMM by default): 1e-5 relative, as for our kernels.
  expect_close(y, Y.read(), 1e-5f, "Y");
  expect_close(dx, dX.read(), 1e-5f, "dX");
  expect_close(dw, dW.read(), 1e-5f, "dW");
  expect_close(db, dB.read(), 1e-5f, "db");
}

TEST(GpuCudnn, ActivationsAndSoftmaxMatchTheCpuBackend) {
#if !defined(MF_HAVE_CUDNN)
  GTEST_SKIP() << "this build found no cuDNN headers";
#endif
  std::string why;
  auto device = gpu_backend(GemmImpl::tiled, why, ActivationImpl::cudnn);
  if (!device) GTEST_SKIP() << why;
  CpuBackend cpu;
  const int m = 70, k = 30, n = 10;
  const auto x = random_vector(size_t(m) * k, 1), w = random_vector(size_t(k) * n, 2),
             b = random_vector(n, 3), dy = random_vector(size_t(m) * n, 4);
  for (Activation act : {Activation::relu, Activation::sigmoid, Activation::tanh}) {
    std::vector<float> y(size_t(m) * n), dz(y.size());
    cpu.dense_forward(x.data(), w.data(), b.data(), y.data(), nullptr, m, k, n, act);
    cpu.activation_backward(dy.data(), dz.data(), int64_t(y.size()), {act, y.data(), nullptr});
    Buffer<float> X(*device, x), W(*device, w), B(*device, b), Y(*device, nans(y.size())),
        dY(*device, dy);
    device->dense_forward(X.get(), W.get(), B.get(), Y.get(), nullptr, m, k, n, act);
    expect_close(y, Y.read(), 1e-5f, "cuDNN activation forward");
    // cuDNN's backward for relu; sigmoid's and tanh's are ours (cuDNN would need the forward
    // input).
    device->activation_backward(dY.get(), dY.get(), int64_t(y.size()), {act, Y.get(), nullptr});
    expect_close(dz, dY.read(), 1e-5f, "activation backward");
  }
  std::vector<float> labels(m), d_out(size_t(m) * n), values(2 * size_t(m));
  for (int r = 0; r < m; ++r) labels[r] = float(r % n);
  const auto logits = random_vector(size_t(m) * n, 5, -4.f, 4.f);
  const LossShape shape = default_loss_shape(Loss::sparse_categorical_crossentropy, n);
  const MemberSettings settings;
  cpu.loss(shape, logits.data(), labels.data(), d_out.data(), values.data(), m, n, &settings);
  Buffer<float> Logits(*device, logits), T(*device, labels), D(*device, nans(d_out.size())),
      V(*device, nans(2 * m));
  Buffer<MemberSettings> Settings(*device, {settings});
  device->loss(shape, Logits.get(), T.get(), D.get(), V.get(), m, n, Settings.get());
  expect_close(d_out, D.read(), 1e-5f, "cuDNN softmax cross-entropy gradient");
  expect_close(values, V.read(), 1e-5f, "cuDNN softmax cross-entropy loss and accuracy");
}

// 3 epochs of 1875 steps amplify rounding differences, so the curves are
// compared loosely: epoch losses within 2% and test accuracy within one point.
TEST(GpuFashionMnist, ThreeEpochsMatchTheCpuBackend) {
  std::string why;
  auto device = gpu_backend(GemmImpl::tiled, why);
  if (!device) GTEST_SKIP() << why;
  if (!std::filesystem::is_directory(fashion_mnist_dir()))
    GTEST_SKIP() << fashion_mnist_dir()
                 << " not found (Debian package dataset-fashion-mnist, or MULTIFIT_DATA)";
  const DataSplit data = load_data("fashion-mnist");
  ModelSpec spec;
  spec.name = "fashion";
  spec.input = 784;
  spec.layers = {{256, Activation::relu}, {128, Activation::relu}, {10, Activation::softmax}};
  spec.loss = Loss::sparse_categorical_crossentropy;
  spec.fit = {3, 32, 0.f, true};
  spec.seed = 42;
  CpuBackend cpu;
  auto run = [&](Backend& backend) {
    DeviceData train(backend, data.train), test(backend, *data.test);
    Model model(spec, backend);
    FitResult result = fit(model, train, {});
    return std::make_pair(result, evaluate(model, test, 0, test.rows()));
  };
  const auto [want, want_test] = run(cpu);
  const auto [got, got_test] = run(*device);
  for (size_t e = 0; e < want.epochs.size(); ++e)
    EXPECT_NEAR(got.epochs[e].loss, want.epochs[e].loss, 0.02 * want.epochs[e].loss)
        << "epoch " << e;
  EXPECT_NEAR(got_test.accuracy, want_test.accuracy, 0.01);
  RecordProperty("cpu_test_accuracy", std::to_string(want_test.accuracy));
  RecordProperty("cuda_test_accuracy", std::to_string(got_test.accuracy));
  RecordProperty("cpu_train_s", std::to_string(want.train_s));
  RecordProperty("cuda_train_s", std::to_string(got.train_s));
}

}  // namespace
}  // namespace mf::test
