#include "kernels/batch_cpu.h"

#include <cstring>

#include "kernels/element_math.h"

namespace mf::cpu {

void shuffle(int* order, int n, uint64_t seed, int epoch) {
  for (int i = 0; i < n; ++i)
    order[i] = int(permute_index(uint32_t(i), uint32_t(n), seed, uint32_t(epoch)));
}

void gather(const float* src, int cols, const int* order, int m, float* dst) {
  for (int r = 0; r < m; ++r)
    std::memcpy(dst + int64_t(r) * cols, src + int64_t(order[r]) * cols, sizeof(float) * cols);
}

}  // namespace mf::cpu
