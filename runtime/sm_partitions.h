#pragma once
// How a GPU's SMs are split between the models of one process (--sm-partitions N and a spec's
// "device": {"sms": K}): which partition each model (or pack) runs on and how many SMs each
// partition has. A pure function of the GPU's figures, so that it is tested without a GPU;
// runtime/green_context.h makes the partitions it plans.
//
// The driver splits the SMs into equal groups (8 SMs on compute capability 9.x: its minimum
// partition, a multiple of the SMs it schedules together), and a partition is a whole number of
// groups; the SMs the groups leave over (4 of an H100's or H200's 132) run no partition's kernels.
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mf {

// A GPU's SMs as the driver splits them.
struct SmGroups {
  int sm_count = 0;   // the GPU's SMs (132 on an H200)
  int group_sms = 0;  // SMs per group: the smallest partition (8 on compute capability 9.x)
  int groups = 0;     // groups the SMs split into (16 on an H200: 128 SMs)
};

// The SMs the driver's minimum partition size and co-scheduling alignment (cuDeviceGetDevResource's
// minSmPartitionSize and smCoscheduledAlignment) make a group of: the minimum rounded up to the
// alignment (each at least 1).
int group_sms(int min_partition_sms, int alignment_sms);

// What one model (or pack) asks: its name for messages and its spec's "sms", if any.
struct SmRequest {
  std::string name;
  std::optional<int> sms;
};

struct SmPlan {
  // Each partition's size in groups: first one per model with its own "sms", in the models' order,
  // then the `partitions` equal shares of the groups those leave.
  std::vector<int> partition_groups;
  // Per model: the partition it runs on; none: the whole GPU (no "sms" and no --sm-partitions).
  std::vector<std::optional<int>> partition_of;
};

// A model with its own "sms" K gets a partition of its own, K rounded up to whole groups; the
// models without share `partitions` equal partitions of the groups left (0: none, they run on the
// whole GPU), the k-th of them on partition k % partitions. Throws UserError, one line, naming what
// does not fit: more partitions than groups, a request under 1 or over the GPU's SMs, or requests
// that leave fewer groups than partitions.
SmPlan plan_sm_partitions(const SmGroups& gpu, int partitions, std::span<const SmRequest> models);

}  // namespace mf
