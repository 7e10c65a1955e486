#include "backends/cpu/cpu_cost.h"

#include <algorithm>
#include <vector>

#include "kernels/cpu_gemm.h"
#include "kernels/layers_cpu.h"
#include "runtime/clock.h"

namespace mf::cpu {
namespace {

// The fastest of `tries` runs of f, in seconds, after one run to warm it (a libxsmm kernel's
// generation, the caches).
template <class F>
double fastest(int tries, F f) {
  f();
  double best = 1e9;
  for (int i = 0; i < tries; ++i) {
    const Clock::time_point start = Clock::now();
    f();
    best = std::min(best, seconds_since(start));
  }
  return best;
}

}  // namespace

const CostModel& CostModel::measured() {
  static const CostModel model = [] {
    CostModel m;
    // A hidden layer's forward product at batch 32: (32, 256) x (256, 256), libxsmm's path.
    constexpr int kRows = 32, kSide = 256;
    std::vector<float> a(kRows * kSide, 0.5f), b(kSide * kSide, 0.25f), c(kRows * kSide);
    m.mac_s_ = fastest(5,
                       [&] {
                         cpu::product(false, false, kRows, kSide, kSide, a.data(), kSide, b.data(),
                                      kSide, c.data(), kSide);
                       }) /
               (double(kRows) * kSide * kSide);
    // relu over 2^16 floats, and over 16 for the fixed cost of a call.
    constexpr int kFloats = 1 << 16;
    std::vector<float> x(kFloats, -0.5f), y(kFloats);
    m.call_s_ =
        fastest(20, [&] { activation_forward(x.data(), y.data(), 0, 16, Activation::relu); });
    m.float_s_ =
        fastest(5, [&] { activation_forward(x.data(), y.data(), 0, kFloats, Activation::relu); }) /
        kFloats;
    return m;
  }();
  return model;
}

int product_tiles(int64_t multiply_adds, int64_t span, int64_t grain) {
  const int64_t grains = std::max<int64_t>(1, (span + grain - 1) / grain);
  const int64_t asked =
      std::clamp<int64_t>(multiply_adds / kLeastTileMacs, 1, std::min<int64_t>(kMostTiles, grains));
  const int64_t per = (grains + asked - 1) / asked;  // grains a tile, as piece() cuts them
  return int((grains + per - 1) / per);              // so that no tile is empty
}

}  // namespace mf::cpu
