#include "kernels/batch_cpu.h"

#include <cstring>

#include "kernels/cpu_clones.h"
#include "kernels/element_math.h"

namespace mf::cpu {

// permute_index of every i, in two loops: the network's first pass for all of them (vectorized
// across indices), then the cycle walk of those that landed outside [0, n). 512 shuffles of 768
// rows (a pack's epoch) took 6.1 ms on one core index by index, 2.5 ms so.
MF_CPU_CLONES void shuffle(int* order, int n, uint64_t seed, int epoch) {
  const Permutation permutation(uint32_t(n), seed, uint32_t(epoch));
  for (int i = 0; i < n; ++i) order[i] = int(permutation.encrypt(uint32_t(i)));
  for (int i = 0; i < n; ++i) order[i] = int(permutation.walk_from(uint32_t(order[i])));
}

void gather(const float* src, int cols, const int* order, int m, float* dst) {
  for (int r = 0; r < m; ++r)
    std::memcpy(dst + int64_t(r) * cols, src + int64_t(order[r]) * cols, sizeof(float) * cols);
}

}  // namespace mf::cpu
