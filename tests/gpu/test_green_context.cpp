// Green contexts on a GPU (runtime/green_context.h): the partitions of a plan have the SMs the
// driver was asked for, and a cuda backend on each runs its kernels, launched and replayed from a
// graph, to the CPU backend's numbers. Without a GPU, or on a driver without green contexts, they
// skip and say why.
#include <memory>

#include "backends/cuda/cuda_backend.h"
#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/green_context.h"
#include "tests/parity/backend_pair.h"

namespace mf::test {
namespace {

// GPU 0's groups of SMs; none, with why, without a GPU or green contexts.
std::optional<SmGroups> gpu_groups(std::string& why) {
  const DeviceQuery query = query_devices();
  if (query.devices.empty()) {
    why = "no CUDA device (" + query.why_none + ")";
    return std::nullopt;
  }
  try {
    return sm_groups(0);
  } catch (const UserError& e) {
    why = e.what();
    return std::nullopt;
  }
}

// A tanh layer's forward on `device`, launched, then captured and replayed, against the CPU's.
void expect_forward_as_on_the_cpu(Backend& device) {
  CpuBackend cpu;
  const int m = 70, k = 100, n = 130;
  const auto x = random_vector(size_t(m) * k, 1), w = random_vector(size_t(k) * n, 2),
             b = random_vector(n, 3);
  std::vector<float> y(size_t(m) * n);
  cpu.dense_forward(x.data(), w.data(), b.data(), y.data(), nullptr, m, k, n, Activation::tanh);
  Buffer<float> X(device, x), W(device, w), B(device, b), Y(device, nans(y.size())),
      replayed(device, nans(y.size()));
  device.mark();
  device.dense_forward(X.get(), W.get(), B.get(), Y.get(), nullptr, m, k, n, Activation::tanh);
  device.mark();
  expect_close(y, Y.read(), 1e-5f, "Y launched");
  const auto graph = device.capture([&] {
    device.dense_forward(X.get(), W.get(), B.get(), replayed.get(), nullptr, m, k, n,
                         Activation::tanh);
  });
  graph->launch();
  expect_close(y, replayed.read(), 1e-5f, "Y replayed");
  const std::vector<double> marks = device.take_marks();
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_LE(marks[0], marks[1]) << "the events on the green context's stream are in order";
}

TEST(GreenContexts, TwoEqualPartitionsHaveTheSmsAskedAndRunKernels) {
  std::string why;
  const std::optional<SmGroups> gpu = gpu_groups(why);
  if (!gpu) GTEST_SKIP() << why;
  if (gpu->groups < 2) GTEST_SKIP() << "GPU 0 splits into " << gpu->groups << " group of SMs";
  const SmRequest shared[] = {{"a", std::nullopt}, {"b", std::nullopt}};
  const SmPlan plan = plan_sm_partitions(*gpu, 2, shared);
  const auto contexts = make_green_contexts(0, *gpu, plan.partition_groups);
  ASSERT_EQ(contexts.size(), 2u);
  for (size_t p = 0; p < 2; ++p) {
    EXPECT_EQ(contexts[p]->sms(), gpu->groups / 2 * gpu->group_sms) << "partition " << p;
    auto backend = gpu::make_cuda_backend({0, GemmImpl::tiled, ActivationImpl::ours, contexts[p]});
    expect_forward_as_on_the_cpu(*backend);
  }
}

TEST(GreenContexts, AModelsOwnSmsAreItsPartitionsBesideTheSharedOne) {
  std::string why;
  const std::optional<SmGroups> gpu = gpu_groups(why);
  if (!gpu) GTEST_SKIP() << why;
  if (gpu->groups < 3) GTEST_SKIP() << "GPU 0 splits into " << gpu->groups << " groups of SMs";
  // one group's SMs and one more asked: two groups of its own; the rest shared by one partition
  const SmRequest models[] = {{"own", gpu->group_sms + 1}, {"shared", std::nullopt}};
  const SmPlan plan = plan_sm_partitions(*gpu, 1, models);
  const auto contexts = make_green_contexts(0, *gpu, plan.partition_groups);
  ASSERT_EQ(contexts.size(), 2u);
  EXPECT_EQ(contexts[0]->sms(), 2 * gpu->group_sms);
  EXPECT_EQ(contexts[1]->sms(), (gpu->groups - 2) * gpu->group_sms);
  for (const auto& context : contexts) {
    auto backend = gpu::make_cuda_backend({0, GemmImpl::tiled, ActivationImpl::ours, context});
    expect_forward_as_on_the_cpu(*backend);
  }
}

}  // namespace
}  // namespace mf::test
