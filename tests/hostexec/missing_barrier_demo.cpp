// A block-wide reversal through shared memory with its __syncthreads() left
// out: thread t reads the slot thread (n-1-t) writes, with no barrier between.
// Under ThreadSanitizer this must be reported (the ctest expects a failure);
// it shows that host execution turns a missing barrier into a detected race.
#include <cstdio>
#include <vector>

#include "target/target.h"

namespace mf::hostexec {
namespace {

constexpr int kThreads = 64;

__global__ void reverse_without_barrier(const float* in, float* out) {
  __shared__ float tile[kThreads];
  const int t = int(threadIdx.x);
  tile[t] = in[t];
  // __syncthreads() belongs here.
  out[t] = tile[kThreads - 1 - t];
}

}  // namespace
}  // namespace mf::hostexec

int main() {
  using namespace mf::hostexec;
  std::vector<float> in(kThreads), out(kThreads);
  for (int i = 0; i < kThreads; ++i) in[i] = float(i);
  for (int round = 0; round < 20; ++round)
    launch{reverse_without_barrier, dim3(1), dim3(kThreads), nullptr}(in.data(), out.data());
  std::printf("ran without a report: %g\n", out[0]);
  return 0;
}
