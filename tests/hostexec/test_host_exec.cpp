// The host-execution model itself: thread and block indices, __syncthreads()
// as a real barrier across OS threads, and launch configurations refused
// exactly where a GPU refuses them.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "kernels/target.h"

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

TEST(HostExec, SyncthreadsIsABarrierAcrossTheBlock) {
  constexpr int kThreads = 128, kBlocks = 5;
  std::vector<int> in(kThreads * kBlocks), out(in.size());
  std::iota(in.begin(), in.end(), 0);
  launch{reverse_tiles<kThreads>, dim3(kBlocks), dim3(16, 8), nullptr}(in.data(), out.data());
  for (int b = 0; b < kBlocks; ++b)
    for (int t = 0; t < kThreads; ++t) ASSERT_EQ(out[b * kThreads + t], in[b * kThreads + kThreads - 1 - t]);
}

TEST(HostExec, EveryThreadOfEveryBlockRunsOnce) {
  const dim3 grid(3, 2, 2), block(4, 3, 2);
  std::vector<int> seen(3 * 2 * 2 * 4 * 3 * 2, 0);
  launch{record_coordinates, grid, block, nullptr}(seen.data());
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << "thread " << i;
}

TEST(HostExec, RefusesLaunchesAGpuRefuses) {
  std::vector<int> seen(1, 0);
  const dim3 bad[][2] = {{dim3(0), dim3(32)},       {dim3(1, 65536), dim3(32)}, {dim3(1, 1, 65536), dim3(32)},
                         {dim3(1), dim3(1025)},     {dim3(1), dim3(32, 33)},    {dim3(1), dim3(1, 1, 65)},
                         {dim3(1), dim3(0)}};
  for (const auto& config : bad) {
    try {
      launch{record_coordinates, config[0], config[1], nullptr}(seen.data());
      ADD_FAILURE() << "accepted grid (" << config[0].x << "," << config[0].y << "," << config[0].z << ") block ("
                    << config[1].x << "," << config[1].y << "," << config[1].z << ")";
    } catch (const CudaError& e) {
      EXPECT_NE(std::string(e.what()).find("invalid configuration argument"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("test_host_exec.cpp"), std::string::npos) << "not the caller's file";
    }
  }
  EXPECT_EQ(seen[0], 0);  // nothing ran
}

}  // namespace
}  // namespace mf::hostexec
