// streams: every model of a phase on its own host thread, with its own backend (its own CUDA stream
// and library handles) and pool, in one process (modes/thread_groups.h): groups of one. With
// --sm-partitions N, model i's stream is on partition i % N of the GPU's SMs, and a model whose
// spec asks "sms" on its own (modes/sm_placement.h).
#include "study/modes/thread_groups.h"

namespace mf {

std::unique_ptr<Mode> make_streams_mode(const RunOptions& options) {
  return make_thread_groups_mode(
      ModeKind::streams, options,
      [](std::span<const Job> jobs) {
        GroupPlan plan;
        for (size_t i = 0; i < jobs.size(); ++i) plan.groups.push_back({i});
        return plan;
      },
      false);
}

}  // namespace mf
