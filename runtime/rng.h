#pragma once
// A small, fully specified random generator (SplitMix64), so that the same seed
// gives the same weights, data and shuffles on every platform and backend
// (std:: distributions are implementation-defined).
#include <cmath>
#include <cstdint>

namespace mf {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 24 bits, exactly representable as float.
  float uniform() { return float(next() >> 40) * (1.0f / 16777216.0f); }
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
  // Standard normal (Box-Muller, in double from two 53-bit uniforms; the first in (0, 1] so its log
  // is finite).
  double normal() {
    const double u1 = double((next() >> 11) + 1) * 0x1.0p-53, u2 = double(next() >> 11) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  // Uniform integer in [0, n).
  uint32_t below(uint32_t n) { return uint32_t((next() >> 32) * n >> 32); }
  // An independent stream for a purpose (weights, data, ...), derived from this seed.
  Rng fork(uint64_t stream) const { return Rng(state_ ^ (0xd1b54a32d192ed03ULL * (stream + 1))); }

 private:
  uint64_t state_;
};

}  // namespace mf
