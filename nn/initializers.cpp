#include "nn/initializers.h"

#include <algorithm>
#include <cmath>

namespace mf {
namespace {

struct VarianceScaling {
  double scale;
  enum { fan_in, fan_out, fan_avg } mode;
  bool normal;  // truncated normal, else uniform
};

double truncated(Rng& rng) {
  double x = rng.normal();
  while (std::fabs(x) > 2.0) x = rng.normal();
  return x;
}

}  // namespace

void initialize(const Initializer& init, float* values, int64_t count, int fan_in, int fan_out,
                Rng& rng) {
  VarianceScaling v{1.0, VarianceScaling::fan_avg, false};
  switch (init.kind) {
    case InitializerKind::zeros:
      return std::fill(values, values + count, 0.f);
    case InitializerKind::ones:
      return std::fill(values, values + count, 1.f);
    case InitializerKind::constant:
      return std::fill(values, values + count, float(init.a));
    case InitializerKind::random_uniform:
      for (int64_t i = 0; i < count; ++i) values[i] = rng.uniform(float(init.a), float(init.b));
      return;
    case InitializerKind::random_normal:
      for (int64_t i = 0; i < count; ++i) values[i] = float(init.a + init.b * rng.normal());
      return;
    case InitializerKind::truncated_normal:
      for (int64_t i = 0; i < count; ++i) values[i] = float(init.a + init.b * truncated(rng));
      return;
    case InitializerKind::glorot_uniform: {
      // In float, as multifit drew its Glorot kernels before the other initializers came: the same
      // seed keeps giving the same first weights.
      const float limit = std::sqrt(6.f / float(fan_in + fan_out));
      for (int64_t i = 0; i < count; ++i) values[i] = rng.uniform(-limit, limit);
      return;
    }
    case InitializerKind::glorot_normal:
      v = {1.0, VarianceScaling::fan_avg, true};
      break;
    case InitializerKind::he_uniform:
      v = {2.0, VarianceScaling::fan_in, false};
      break;
    case InitializerKind::he_normal:
      v = {2.0, VarianceScaling::fan_in, true};
      break;
    case InitializerKind::lecun_uniform:
      v = {1.0, VarianceScaling::fan_in, false};
      break;
    case InitializerKind::lecun_normal:
      v = {1.0, VarianceScaling::fan_in, true};
      break;
  }
  const double fan = v.mode == VarianceScaling::fan_in    ? fan_in
                     : v.mode == VarianceScaling::fan_out ? fan_out
                                                          : (fan_in + fan_out) / 2.0;
  const double scale = v.scale / std::max(1.0, fan);
  if (v.normal) {
    const double stddev = std::sqrt(scale) / 0.87962566103423978;
    for (int64_t i = 0; i < count; ++i) values[i] = float(stddev * truncated(rng));
  } else {
    const float limit = float(std::sqrt(3.0 * scale));
    for (int64_t i = 0; i < count; ++i) values[i] = rng.uniform(-limit, limit);
  }
}

}  // namespace mf
