// packed: the models of a phase that can share kernels train as packs (nn/model.h), every launch
// serving all the members of a pack at once, the member index one more grid dimension (HFTA's
// horizontal fusion, MLSys 2021). Packs of different shapes run side by side, each on its own
// thread and stream, as streams mode runs models (modes/thread_groups.h); with --sm-partitions N,
// pack i on partition i % N of the GPU's SMs, and a pack whose members ask "sms" (pack_key keeps
// them together) on its own (modes/sm_placement.h).
#include <map>
#include <optional>
#include <tuple>

#include "study/modes/thread_groups.h"
#include "backends/factory.h"
#include "nn/model.h"

namespace mf {

namespace {

// A pack as a boundary names it: its first job and its number.
struct OpenedPack {
  const Job* first = nullptr;
  size_t number = 0;
  std::string named() const { return " (pack " + std::to_string(number) + ")"; }
};

// Why `job` opens a pack rather than join an earlier one of `plan`: `full`, the pack of its
// pack_key, data and device, holds its bound (set by `bounded_by`, in words); else what sets it
// apart from `same`, the last pack opened on its data and device; else from `same_data`, the last
// on its data (a device); else from `other`, the last pack opened (a data source). Null: none.
std::string boundary(const Job& job, const GroupPlan& plan, std::optional<size_t> full,
                     const std::string& bounded_by, const OpenedPack* same,
                     const OpenedPack* same_data, const OpenedPack* other) {
  if (!job.spec) return "its entry failed";
  if (full)
    return "pack " + std::to_string(*full) + " is full (" +
           std::to_string(plan.groups[*full].size()) + " members" +
           (bounded_by.empty() ? "" : ": " + bounded_by) + ")";
  if (same) return pack_difference(*job.spec, *same->first->spec) + same->named();
  if (same_data)
    return "device " + std::to_string(job.device) + ", not " +
           std::to_string(same_data->first->device) + same_data->named();
  if (other) return "data " + job.data + ", not " + other->first->data + other->named();
  return "";  // the first pack
}

// The last value of `map` at `key`, or null.
template <class Map, class Key>
const OpenedPack* last_at(const Map& map, const Key& key) {
  const auto at = map.find(key);
  return at != map.end() ? &at->second : nullptr;
}

}  // namespace

GroupPlan plan_packs(std::span<const Job> jobs, int pack_size, const std::string& bounded_by) {
  const size_t bound = pack_size > 0 ? size_t(pack_size) : kMaxPackSize;
  GroupPlan plan;
  // (pack_key, data, device) -> its last pack
  std::map<std::tuple<std::string, std::string, int>, size_t> open;
  // what a boundary names: the last pack opened on each (data, device), on each data source, and
  // the last of all
  std::map<std::pair<std::string, int>, OpenedPack> last_on;
  std::map<std::string, OpenedPack> last_reading;
  std::optional<OpenedPack> last;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& job = jobs[i];
    if (!job.spec) {  // a bad entry fails alone
      plan.boundaries.push_back(
          boundary(job, plan, std::nullopt, bounded_by, nullptr, nullptr, nullptr));
      plan.groups.push_back({i});
      continue;
    }
    const auto key = std::make_tuple(pack_key(*job.spec), job.data, job.device);
    const auto at = open.find(key);
    const bool opened = at != open.end();
    if (opened && plan.groups[at->second].size() < bound) {
      plan.groups[at->second].push_back(i);
      continue;
    }
    const auto place = std::make_pair(job.data, job.device);
    plan.boundaries.push_back(boundary(job, plan, opened ? std::optional(at->second) : std::nullopt,
                                       bounded_by, last_at(last_on, place),
                                       last_at(last_reading, job.data), last ? &*last : nullptr));
    const OpenedPack pack{&job, plan.groups.size()};
    open[key] = pack.number;
    last_on[place] = last_reading[job.data] = pack;
    last = pack;
    plan.groups.push_back({i});
  }
  return plan;
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

// What set that bound, in words, for a full pack's boundary.
std::string bound_set_by(const RunOptions& options) {
  if (options.pack_size > 0) return "--pack-size " + std::to_string(options.pack_size);
  if (options.backend.kind == BackendKind::cpu)
    return "the cpu backend's one pack per training thread, which --pack-size replaces";
  return "the kernels' most members";
}

}  // namespace

std::unique_ptr<Mode> make_packed_mode(const RunOptions& options) {
  return make_thread_groups_mode(
      ModeKind::packed, options,
      [&options](std::span<const Job> jobs) {
        return plan_packs(jobs, pack_bound(jobs, options), bound_set_by(options));
      },
      true);
}

}  // namespace mf
