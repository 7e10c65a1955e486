#pragma once
// CPU references of the epoch shuffle and the minibatch gather.
#include <cstdint>

namespace mf::cpu {

void shuffle(int* order, int n, uint64_t seed, int epoch);
void gather(const float* src, int cols, const int* order, int m, float* dst);

}  // namespace mf::cpu
