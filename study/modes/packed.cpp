// packed: the models of a phase that can share kernels train as packs (nn/model.h), every launch
// serving all the members of a pack at once, the member index one more grid dimension (HFTA's
// horizontal fusion, MLSys 2021). Packs of different shapes run side by side, each on its own
// thread and stream, as streams mode runs models (modes/thread_groups.h); with --sm-partitions N,
// pack i on partition i % N of the GPU's SMs, and a pack whose members ask "sms" (pack_key keeps
// them together) on its own (modes/sm_placement.h).
#include <map>
#include <tuple>

#include "study/modes/thread_groups.h"
#include "backends/factory.h"
#include "nn/model.h"

namespace mf {

std::vector<std::vector<size_t>> plan_packs(std::span<const Job> jobs, int pack_size) {
  const size_t bound = pack_size > 0 ? size_t(pack_size) : kMaxPackSize;
  std::vector<std::vector<size_t>> packs;
  // (pack_key, data, device) -> its last pack
  std::map<std::tuple<std::string, std::string, int>, size_t> open;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& job = jobs[i];
    if (!job.spec) {  // a bad entry fails alone
      packs.push_back({i});
      continue;
    }
    const auto key = std::make_tuple(pack_key(*job.spec), job.data, job.device);
    const auto at = open.find(key);
    if (at != open.end() && packs[at->second].size() < bound) {
      packs[at->second].push_back(i);
    } else {
      open[key] = packs.size();
      packs.push_back({i});
    }
  }
  return packs;
}

namespace {

// The bound of a phase's packs: --pack-size where given; on the cpu backend a share of the phase,
// so that each of the threads training at once (max_training_threads) gets a pack of its own: a
// pack's member loop then runs on one thread with no barrier between threads, which measured 6%
// faster on a quiet 2-core machine and 10% beside two busy processes than one pack spread over both
// (512 tiny models, 10 epochs); a GPU's pack stays whole, one launch for all its members.
int pack_bound(std::span<const Job> jobs, const RunOptions& options) {
  if (options.pack_size > 0 || options.backend.kind != BackendKind::cpu) return options.pack_size;
  const size_t threads = max_training_threads(options.backend);
  return int(std::min((jobs.size() + threads - 1) / threads, kMaxPackSize));
}

}  // namespace

std::unique_ptr<Mode> make_packed_mode(const RunOptions& options) {
  return make_thread_groups_mode(
      ModeKind::packed, options,
      [&options](std::span<const Job> jobs) { return plan_packs(jobs, pack_bound(jobs, options)); },
      true);
}

}  // namespace mf
