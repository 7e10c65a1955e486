#include "kernels/optimizer_cpu.h"

namespace mf::cpu {

void adam(float* w, const float* g, float* m, float* v, int64_t n, const AdamStep& step) {
  for (int64_t i = 0; i < n; ++i) adam_update(w[i], m[i], v[i], g[i], step);
}

void sgd(float* w, const float* g, float* velocity, int64_t n, float lr, float momentum) {
  for (int64_t i = 0; i < n; ++i) sgd_update(w[i], velocity[i], g[i], lr, momentum);
}

}  // namespace mf::cpu
