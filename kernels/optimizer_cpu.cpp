#include "kernels/optimizer_cpu.h"

#include "kernels/cpu_clones.h"

namespace mf::cpu {

MF_CPU_CLONES void adam(float* w, const float* g, float* m, float* v, int64_t n, const AdamStep& step) {
  for (int64_t i = 0; i < n; ++i) adam_update(w[i], m[i], v[i], g[i], step);
}

MF_CPU_CLONES void sgd(float* w, const float* g, float* velocity, int64_t n, float lr, float momentum) {
  for (int64_t i = 0; i < n; ++i) sgd_update(w[i], velocity[i], g[i], lr, momentum);
}

}  // namespace mf::cpu
