#include "study/modes/sm_placement.h"

#include <algorithm>
#include <map>
#include <memory>

#include "runtime/error.h"
#include "runtime/green_context.h"

namespace mf {
namespace {

// What group g's models ask: its first model's name and "sms" (a pack's members ask alike,
// pack_key).
SmRequest request_of(std::span<const Job> jobs, const std::vector<size_t>& group) {
  const Job& lead = jobs[group.front()];
  return {lead.name, lead.spec ? lead.spec->device_share.sms : std::nullopt};
}

// The split in words: "GPU 0 in green contexts: 'own' on 16 SMs, the others on 2 partitions of
// 56 SMs".
std::string describe(int device, const std::vector<SmRequest>& asked, const SmPlan& plan,
                     const std::vector<std::shared_ptr<GreenContext>>& contexts) {
  std::string text = "GPU " + std::to_string(device) + " in green contexts: ";
  size_t own = 0;
  for (size_t k = 0; k < asked.size(); ++k)
    if (asked[k].sms)
      text += (own++ ? ", '" : "'") + asked[k].name + "' on " +
              std::to_string(contexts[size_t(*plan.partition_of[k])]->sms()) + " SMs";
  if (own < contexts.size()) {
    const size_t shared = contexts.size() - own;
    text += std::string(own ? ", the others" : "every model") + " on " + std::to_string(shared) +
            (shared == 1 ? " partition of " : " partitions of ") +
            std::to_string(contexts.back()->sms()) + " SMs";
  }
  return text;
}

// The green contexts of the groups `on` GPU `device`, each group given its own; returns the split
// in words.
std::string place_on_device(int device, const std::vector<size_t>& on,
                            const std::vector<SmRequest>& asked, int sm_partitions,
                            std::vector<std::shared_ptr<const GreenContext>>& partitions) {
  const SmGroups gpu = sm_groups(device);
  const SmPlan plan = plan_sm_partitions(gpu, sm_partitions, asked);
  const std::vector<std::shared_ptr<GreenContext>> contexts =
      make_green_contexts(device, gpu, plan.partition_groups);
  for (size_t k = 0; k < on.size(); ++k)
    if (const std::optional<int> partition = plan.partition_of[k])
      partitions[on[k]] = contexts[size_t(*partition)];
  return describe(device, asked, plan, contexts);
}

}  // namespace

std::shared_ptr<const GreenContext> SmPlacement::partition(size_t group) const {
  if (!error_.empty()) throw UserError(error_);
  return partitions_[group];
}

std::optional<int> SmPlacement::sms(size_t group) const {
  if (!error_.empty() || !partitions_[group]) return std::nullopt;
  return partitions_[group]->sms();
}

SmPlacement place_groups(std::span<const Job> jobs, const std::vector<std::vector<size_t>>& groups,
                         const BackendOptions& options, int sm_partitions) {
  SmPlacement placement;
  std::map<int, std::vector<size_t>> by_device;  // the groups on each GPU, in order
  std::map<int, std::vector<SmRequest>> asked;   // and what they ask
  for (size_t g = 0; g < groups.size(); ++g) {
    const int device = jobs[groups[g].front()].device;
    placement.options_.push_back(on_device(options, device));
    by_device[device].push_back(g);
    asked[device].push_back(request_of(jobs, groups[g]));
  }
  placement.partitions_.resize(groups.size());
  if (options.kind != BackendKind::cuda) return placement;  // no SMs to split: ignored
  try {
    for (const auto& [device, on] : by_device) {
      const std::vector<SmRequest>& own = asked[device];
      if (sm_partitions > 0 ||
          std::any_of(own.begin(), own.end(), [](const SmRequest& r) { return r.sms; }))
        placement.notes_.push_back(
            place_on_device(device, on, own, sm_partitions, placement.partitions_));
    }
  } catch (const std::exception& e) {  // a UserError, or the driver failing
    placement.error_ = e.what();
  }
  return placement;
}

}  // namespace mf
