#pragma once
// Where the groups of a phase of streams or packed mode run (modes/thread_groups.h): on the cuda
// backend with --sm-partitions N or a spec's "device": {"sms": K}, each group on the green context
// of its SMs (runtime/green_context.h), planned per GPU by plan_sm_partitions
// (runtime/sm_partitions.h): a group whose models ask for "sms" on its own partition first, the
// others on the N equal ones, the k-th of them on partition k % N. Elsewhere, and without either,
// every group on its whole device.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/factory.h"
#include "study/job.h"

namespace mf {

class SmPlacement {
 public:
  // Group g's backend options: the mode's, on its jobs' device.
  const BackendOptions& options(size_t group) const { return options_[group]; }
  // Group g's green context (make_backend's partition); none: the whole device. Throws the
  // placement's UserError when the SMs could not be split (a plan that does not fit, a driver
  // without green contexts), so that each group's build fails with it.
  std::shared_ptr<const GreenContext> partition(size_t group) const;
  // The SMs of group g's green context, as the driver made it; none: the whole device.
  std::optional<int> sms(size_t group) const;
  // Each split GPU's partitions in words, for the mode's note ("GPU 0 in green contexts: 'own' on
  // 16 SMs, the others on 2 partitions of 56 SMs"); none without green contexts.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  friend SmPlacement place_groups(std::span<const Job>, const std::vector<std::vector<size_t>>&,
                                  const BackendOptions&, int);
  std::vector<BackendOptions> options_;
  std::vector<std::shared_ptr<const GreenContext>> partitions_;  // per group; they go with the
                                                                 // last backend made on them
  std::vector<std::string> notes_;
  std::string error_;
};

// The placement of `groups` (indices into `jobs`, each group on its first job's device), each on
// `options`; `sm_partitions`: RunOptions::sm_partitions. Makes the green contexts; throws
// nothing: a failure is kept for partition() to throw.
SmPlacement place_groups(std::span<const Job> jobs, const std::vector<std::vector<size_t>>& groups,
                         const BackendOptions& options, int sm_partitions);

}  // namespace mf
