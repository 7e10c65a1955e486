#pragma once
// Green contexts (CUDA 12.4+ driver API): disjoint sets of a GPU's SMs in one process. A stream
// made on one (cuGreenCtxStreamCreate) runs its kernels on that context's SMs only, while memory,
// events and graphs stay the device's primary context's, so a model's backend runs on it as on
// any stream (backends/cuda: CudaOptions::partition). The driver is reached through the CUDA
// runtime's cudaGetDriverEntryPointByVersion, so nothing links libcuda; a driver without green
// contexts is a UserError, not a failed start.
#include <memory>
#include <vector>

#include "runtime/sm_partitions.h"

namespace mf {

// GPU `device`'s SMs as the driver splits them (cuDeviceGetDevResource, then
// cuDevSmResourceSplitByCount asked how many groups it makes). Throws UserError when this build or
// the driver has no green contexts, or the driver refuses the query.
SmGroups sm_groups(int device);

// One partition of a GPU's SMs. Made by make_green_contexts; shared by the backends on it, so that
// it goes after the last of their streams.
class GreenContext {
 public:
  GreenContext(void* context, int device, int sms)
      : context_(context), device_(device), sms_(sms) {}
  ~GreenContext();  // cuGreenCtxDestroy: every stream made on it must be destroyed first
  GreenContext(const GreenContext&) = delete;
  GreenContext& operator=(const GreenContext&) = delete;

  int device() const { return device_; }
  // Its SMs, as the driver counts them for the context made (cuGreenCtxGetDevResource).
  int sms() const { return sms_; }
  // A new non-blocking stream on this context's SMs (a cudaStream_t, cuGreenCtxStreamCreate,
  // CUDA 12.5+), which the caller destroys (cudaStreamDestroy) before this context goes. Throws
  // UserError when the driver cannot make one.
  void* create_stream() const;

 private:
  void* context_;  // CUgreenCtx
  int device_, sms_;
};

// The partitions of `plan_groups` (SmPlan::partition_groups: each partition's size in groups of
// `gpu.group_sms` SMs) on GPU `device`, disjoint: one split of the GPU into groups, each partition
// a descriptor of the next of them. Throws UserError as sm_groups does, or when the split gives
// fewer groups than the plan takes.
std::vector<std::shared_ptr<GreenContext>> make_green_contexts(int device, const SmGroups& gpu,
                                                               const std::vector<int>& plan_groups);

}  // namespace mf
