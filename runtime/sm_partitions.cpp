#include "runtime/sm_partitions.h"

#include <algorithm>

#include "runtime/error.h"

namespace mf {
namespace {

std::string sms_text(int sms) { return std::to_string(sms) + (sms == 1 ? " SM" : " SMs"); }

// "the GPU's 132 SMs make at most 16 partitions of 8 SMs (128 SMs in all)": what every refusal
// measures against.
std::string gpu_text(const SmGroups& gpu) {
  return "the GPU's " + sms_text(gpu.sm_count) + " make at most " + std::to_string(gpu.groups) +
         " partitions of " + sms_text(gpu.group_sms) + " (" + sms_text(gpu.groups * gpu.group_sms) +
         " in all)";
}

// Groups of a model's own "sms": K rounded up to whole groups; refused when K is under 1 or
// over what the GPU's groups hold.
int own_groups(const SmGroups& gpu, const SmRequest& model) {
  const int sms = *model.sms;
  const std::string asked =
      "'" + model.name + "': \"device\": {\"sms\": " + std::to_string(sms) + "}";
  if (sms < 1) throw UserError(asked + ": give 1 SM or more");
  if (sms > gpu.sm_count) throw UserError(asked + " is over the GPU's " + sms_text(gpu.sm_count));
  const int groups = (sms + gpu.group_sms - 1) / gpu.group_sms;
  if (groups > gpu.groups)
    throw UserError(asked + ": a partition is whole groups of " + sms_text(gpu.group_sms) +
                    ", and " + gpu_text(gpu));
  return groups;
}

}  // namespace

int group_sms(int min_partition_sms, int alignment_sms) {
  const int alignment = std::max(1, alignment_sms);
  const int minimum = std::max(1, min_partition_sms);
  return (minimum + alignment - 1) / alignment * alignment;
}

SmPlan plan_sm_partitions(const SmGroups& gpu, int partitions, std::span<const SmRequest> models) {
  if (partitions > gpu.groups)
    throw UserError("--sm-partitions " + std::to_string(partitions) + ": " + gpu_text(gpu));
  SmPlan plan;
  int taken = 0;       // groups of the models' own partitions
  std::string owners;  // "'a' 64, 'b' 80"
  bool shared = false;
  for (const SmRequest& model : models) {
    if (!model.sms) {
      plan.partition_of.push_back(std::nullopt);
      shared = true;
      continue;
    }
    const int groups = own_groups(gpu, model);
    plan.partition_of.push_back(int(plan.partition_groups.size()));
    plan.partition_groups.push_back(groups);
    taken += groups;
    owners +=
        (owners.empty() ? "'" : ", '") + model.name + "' " + std::to_string(groups * gpu.group_sms);
  }
  if (taken > gpu.groups)
    throw UserError("the models' own \"sms\" take " + sms_text(taken * gpu.group_sms) + " (" +
                    owners + ", each rounded up to whole groups of " + sms_text(gpu.group_sms) +
                    "), and " + gpu_text(gpu));
  if (partitions == 0 || !shared) return plan;
  const int left = gpu.groups - taken;
  if (left < partitions)
    throw UserError("--sm-partitions " + std::to_string(partitions) +
                    ": the models' own \"sms\" take " + sms_text(taken * gpu.group_sms) + " (" +
                    owners + "), and the " + sms_text(left * gpu.group_sms) +
                    " left make at most " + std::to_string(left) + " partitions of " +
                    sms_text(gpu.group_sms));
  const int first_shared = int(plan.partition_groups.size());
  plan.partition_groups.insert(plan.partition_groups.end(), size_t(partitions), left / partitions);
  int k = 0;  // the models without "sms", counted
  for (std::optional<int>& partition : plan.partition_of)
    if (!partition) partition = first_shared + k++ % partitions;
  return plan;
}

}  // namespace mf
