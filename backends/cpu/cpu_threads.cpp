#include "backends/cpu/cpu_threads.h"

#include <omp.h>

#include <algorithm>

#include "runtime/float_mode.h"

namespace mf::cpu {

Range piece(int64_t n, Part part, int64_t grain) {
  const int64_t grains = (n + grain - 1) / grain;
  const int64_t per = (grains + part.count - 1) / part.count;  // grains per part, rounded up
  const int64_t begin = std::min(n, int64_t(part.index) * per * grain);
  return {begin, std::min(n, begin + per * grain)};
}

void on_threads(int threads, const std::function<void(int, int)>& work) {
  if (threads <= 1) return work(0, 1);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    if (t > 0) flush_denormals_on_this_thread();
    work(t, omp_get_num_threads());
  }
}

void team_barrier() {
#pragma omp barrier
}

}  // namespace mf::cpu
