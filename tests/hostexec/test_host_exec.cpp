// The host-execution model itself: thread and block indices, __syncthreads()
// as a real barrier across OS threads, and launch configurations refused
// exactly where a GPU refuses them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/loss_cpu.h"

namespace mf::hostexec {
namespace {

// out[block][t] = in[block][n-1-t] through shared memory: correct only if the
// barrier really holds every thread until the whole tile is written.
template <int N>
__global__ void reverse_tiles(const int* in, int* out) {
  __shared__ int tile[N];
  const int t = int(threadIdx.x + threadIdx.y * blockDim.x);
  const int base = int(blockIdx.x) * N;
  tile[t] = in[base + t];
  __syncthreads();
  out[base + t] = tile[N - 1 - t];
}

// Every thread records its flattened coordinates once.
__global__ void record_coordinates(int* seen) {
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  seen[block * blockDim.x * blockDim.y * blockDim.z + thread] += 1;
}

// out[t] = denorm_min * 1 on each CUDA thread.
__global__ void multiply_denormal(float* out) {
  volatile float denormal = 1.4e-45f, one = 1.f;
  out[threadIdx.x] = denormal * one;
}

// The threads that play CUDA threads flush denormals, as the CPU backend's does
// (runtime/float_mode.h).
TEST(HostExec, ThreadsFlushDenormals) {
  std::vector<float> out(64, -1.f);
  launch{multiply_denormal, dim3(1), dim3(64), nullptr}(out.data());
  for (float x : out) EXPECT_EQ(x, 0.f);
}

TEST(HostExec, SyncthreadsIsABarrierAcrossTheBlock) {
  constexpr int kThreads = 128, kBlocks = 5;
  std::vector<int> in(kThreads * kBlocks), out(in.size());
  std::iota(in.begin(), in.end(), 0);
  launch{reverse_tiles<kThreads>, dim3(kBlocks), dim3(16, 8), nullptr}(in.data(), out.data());
  for (int b = 0; b < kBlocks; ++b)
    for (int t = 0; t < kThreads; ++t)
      ASSERT_EQ(out[b * kThreads + t], in[b * kThreads + kThreads - 1 - t]);
}

TEST(HostExec, EveryThreadOfEveryBlockRunsOnce) {
  const dim3 grid(3, 2, 2), block(4, 3, 2);
  std::vector<int> seen(3 * 2 * 2 * 4 * 3 * 2, 0);
  launch{record_coordinates, grid, block, nullptr}(seen.data());
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << "thread " << i;
}

TEST(HostExec, RefusesLaunchesAGpuRefuses) {
  std::vector<int> seen(1, 0);
  const dim3 bad[][2] = {
      {dim3(0), dim3(32)},   {dim3(1, 65536), dim3(32)}, {dim3(1, 1, 65536), dim3(32)},
      {dim3(1), dim3(1025)}, {dim3(1), dim3(32, 33)},    {dim3(1), dim3(1, 1, 65)},
      {dim3(1), dim3(0)}};
  for (const auto& config : bad) {
    try {
      launch{record_coordinates, config[0], config[1], nullptr}(seen.data());
      ADD_FAILURE() << "accepted grid (" << config[0].x << "," << config[0].y << "," << config[0].z
                    << ") block (" << config[1].x << "," << config[1].y << "," << config[1].z
                    << ")";
    } catch (const CudaError& e) {
      EXPECT_NE(std::string(e.what()).find("invalid configuration argument"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("test_host_exec.cpp"), std::string::npos)
          << "not the caller's file";
    }
  }
  EXPECT_EQ(seen[0], 0);  // nothing ran
}

// The cuDNN reference path's cross-entropy from probabilities, run here on
// probabilities computed on the host: the same loss, gradient and accuracy as
// the CPU backend's fused softmax cross-entropy from the logits.
TEST(HostExec, CrossentropyFromProbabilitiesMatchesTheFusedLoss) {
  const int m = 130, n = 7;
  std::vector<float> logits(m * n), labels(m), probabilities(m * n);
  for (int i = 0; i < m * n; ++i) logits[i] = float((i * 37) % 23) / 4.f - 3.f;
  for (int r = 0; r < m; ++r) {
    labels[r] = float(r % n);
    float max = logits[r * n], sum = 0.f;
    for (int j = 1; j < n; ++j) max = std::max(max, logits[r * n + j]);
    for (int j = 0; j < n; ++j) sum += std::exp(logits[r * n + j] - max);
    for (int j = 0; j < n; ++j) probabilities[r * n + j] = std::exp(logits[r * n + j] - max) / sum;
  }
  const LossShape shape{
      Loss::sparse_categorical_crossentropy, false, 1, {1, {Metric::sparse_categorical_accuracy}}};
  std::vector<float> want_d(m * n), want(2 * m), got(2 * m);
  cpu::loss(shape, {}, logits.data(), labels.data(), want_d.data(), want.data(), m, n);
  crossentropy_from_probabilities(shape, probabilities.data(), labels.data(), probabilities.data(),
                                  got.data(), m, n, {},
                                  nullptr);  // the gradient overwrites the probabilities
  for (int r = 0; r < m; ++r) {
    EXPECT_NEAR(got[2 * r], want[2 * r], 1e-5f * (1.f + want[2 * r])) << "row " << r;  // the loss
    EXPECT_EQ(got[2 * r + 1], want[2 * r + 1]) << "row " << r;  // the accuracy
  }
  for (int i = 0; i < m * n; ++i)
    EXPECT_NEAR(probabilities[i], want_d[i], 1e-7f) << "element " << i;
}

}  // namespace
}  // namespace mf::hostexec

namespace mf::hostexec {
namespace {

__global__ void add_to_each(float* values, float amount, int n) {
  const int i = int(threadIdx.x);
  if (i < n) values[i] += amount;
}

// A capture records launches without running them, each with its arguments as they were; every
// launch of the graph runs them again. That is what makes host execution check that a training
// step's launches are the same every step: a replay cannot see an argument that changed since.
TEST(HostExec, AGraphReplaysItsLaunchesWithTheirArguments) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  std::vector<float> values = {1.f, 2.f, 3.f};
  float amount = 10.f;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  launch{add_to_each, dim3(1), dim3(4), stream}(values.data(), amount, 3);
  EXPECT_EQ(cudaMemsetAsync(values.data(), 0, sizeof(float), stream),
            cudaErrorStreamCaptureUnsupported);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaErrorStreamCaptureUnsupported);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  EXPECT_EQ(values, (std::vector<float>{1.f, 2.f, 3.f}));  // recorded, not run
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  amount = 100.f;  // too late: the launch has its argument
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  EXPECT_EQ(values, (std::vector<float>{21.f, 22.f, 23.f}));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace mf::hostexec
