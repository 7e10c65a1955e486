#include "runtime/green_context.h"

#include <string>

#include "runtime/error.h"

#if defined(MF_HAVE_CUDA)
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#endif

namespace mf {

#if defined(MF_HAVE_CUDA)
namespace {

constexpr const char* kWhat = "green contexts (--sm-partitions, a spec's \"device\" \"sms\")";

// The driver's entry points, found once through the CUDA runtime (each at the CUDA version that
// introduced it, so that a later driver gives that version's form).
struct Driver {
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuGetErrorName_v6000 error_name = nullptr;
  PFN_cuDeviceGetDevResource_v12040 device_resource = nullptr;
  PFN_cuDevSmResourceSplitByCount_v12040 split = nullptr;
  PFN_cuDevResourceGenerateDesc_v12040 generate_desc = nullptr;
  PFN_cuGreenCtxCreate_v12040 create = nullptr;
  PFN_cuGreenCtxGetDevResource_v12040 context_resource = nullptr;
  PFN_cuGreenCtxDestroy_v12040 destroy = nullptr;
  PFN_cuGreenCtxStreamCreate_v12050 stream_create = nullptr;
  std::string missing;  // why not, when an entry point is missing: the UserError's text
};

template <class F>
void find(Driver& driver, F& entry, const char* symbol, unsigned version) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t status =
      cudaGetDriverEntryPointByVersion(symbol, &address, version, cudaEnableDefault, &found);
  if (status == cudaSuccess && found == cudaDriverEntryPointSuccess && address) {
    entry = reinterpret_cast<F>(address);
    return;
  }
  cudaGetLastError();  // clear it: a missing entry point is no fault of the context
  if (!driver.missing.empty()) return;
  int version_found = 0;
  cudaDriverGetVersion(&version_found);
  driver.missing =
      std::string(kWhat) + " need an NVIDIA driver of CUDA " + std::to_string(version / 1000) +
      "." + std::to_string(version % 1000 / 10) + " or later (" + symbol + "); this one is CUDA " +
      std::to_string(version_found / 1000) + "." + std::to_string(version_found % 1000 / 10) +
      ": update the driver, or drop --sm-partitions and \"sms\"";
}

const Driver& driver() {
  static const Driver loaded = [] {
    Driver d;
    find(d, d.device_get, "cuDeviceGet", 2000);
    find(d, d.error_name, "cuGetErrorName", 6000);
    find(d, d.device_resource, "cuDeviceGetDevResource", 12040);
    find(d, d.split, "cuDevSmResourceSplitByCount", 12040);
    find(d, d.generate_desc, "cuDevResourceGenerateDesc", 12040);
    find(d, d.create, "cuGreenCtxCreate", 12040);
    find(d, d.context_resource, "cuGreenCtxGetDevResource", 12040);
    find(d, d.destroy, "cuGreenCtxDestroy", 12040);
    find(d, d.stream_create, "cuGreenCtxStreamCreate", 12050);
    return d;
  }();
  if (!loaded.missing.empty()) throw UserError(loaded.missing);
  return loaded;
}

// A driver call's result: a UserError naming the call and the driver's error when it failed.
void check(CUresult result, const char* call) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (driver().error_name(result, &name) != CUDA_SUCCESS || !name) name = "an unknown error";
  throw UserError(std::string(kWhat) + ": " + call + " failed (" + name +
                  "): this GPU or driver cannot make them; drop --sm-partitions and \"sms\"");
}

// The whole GPU's SMs, with its primary context made first (green contexts retain it; made here,
// not by the first of them).
CUdevResource whole_gpu(int device, CUdevice& handle) {
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess || cudaSetDevice(device) != cudaSuccess ||
      cudaFree(nullptr) != cudaSuccess || cudaSetDevice(current) != cudaSuccess)
    throw UserError(std::string(kWhat) + ": CUDA device " + std::to_string(device) +
                    " cannot be used: " + cudaGetErrorString(cudaGetLastError()));
  const Driver& d = driver();
  check(d.device_get(&handle, device), "cuDeviceGet");
  CUdevResource whole{};
  check(d.device_resource(handle, &whole, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
  return whole;
}

// The groups of `group_sms` SMs the driver splits `whole` into: counted first (a null result array
// asks how many it would make, as the driver documents), then made.
std::vector<CUdevResource> split_sms(CUdevResource& whole, unsigned group_sms) {
  unsigned count = 0;
  check(driver().split(nullptr, &count, &whole, nullptr, 0, group_sms),
        "cuDevSmResourceSplitByCount");
  std::vector<CUdevResource> groups(count);
  if (count > 0)
    check(driver().split(groups.data(), &count, &whole, nullptr, 0, group_sms),
          "cuDevSmResourceSplitByCount");
  groups.resize(count);
  return groups;
}

}  // namespace

SmGroups sm_groups(int device) {
  CUdevice handle = 0;
  CUdevResource whole = whole_gpu(device, handle);
  // The size asked is the driver's minimum, aligned; the size given is read from the split itself,
  // since an older driver, whose resource has no such fields, leaves the minimum and alignment 0.
  const int asked =
      group_sms(int(whole.sm.minSmPartitionSize), int(whole.sm.smCoscheduledAlignment));
  const std::vector<CUdevResource> split = split_sms(whole, unsigned(asked));
  return {int(whole.sm.smCount), split.empty() ? asked : int(split[0].sm.smCount),
          int(split.size())};
}

GreenContext::~GreenContext() { driver().destroy(static_cast<CUgreenCtx>(context_)); }

void* GreenContext::create_stream() const {
  CUstream stream = nullptr;
  check(
      driver().stream_create(&stream, static_cast<CUgreenCtx>(context_), CU_STREAM_NON_BLOCKING, 0),
      "cuGreenCtxStreamCreate");
  return stream;
}

std::vector<std::shared_ptr<GreenContext>> make_green_contexts(
    int device, const SmGroups& gpu, const std::vector<int>& plan_groups) {
  const Driver& d = driver();
  CUdevice handle = 0;
  CUdevResource whole = whole_gpu(device, handle);
  std::vector<CUdevResource> groups = split_sms(whole, unsigned(gpu.group_sms));
  const size_t made = groups.size();
  std::vector<std::shared_ptr<GreenContext>> contexts;
  size_t next = 0;  // the first group not yet in a partition
  for (int count : plan_groups) {
    if (next + size_t(count) > made)
      throw UserError(std::string(kWhat) + ": the driver split GPU " + std::to_string(device) +
                      " into " + std::to_string(made) + " groups of " +
                      std::to_string(gpu.group_sms) + " SMs, fewer than the partitions take");
    CUdevResourceDesc desc = nullptr;
    check(d.generate_desc(&desc, &groups[next], unsigned(count)), "cuDevResourceGenerateDesc");
    next += size_t(count);
    CUgreenCtx context = nullptr;
    check(d.create(&context, desc, handle, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
    CUdevResource own{};
    const CUresult asked = d.context_resource(context, &own, CU_DEV_RESOURCE_TYPE_SM);
    if (asked != CUDA_SUCCESS) d.destroy(context);
    check(asked, "cuGreenCtxGetDevResource");
    contexts.push_back(std::make_shared<GreenContext>(context, device, int(own.sm.smCount)));
  }
  return contexts;
}
#else
namespace {
[[noreturn]] void no_cuda() {
  throw UserError(
      "green contexts (--sm-partitions, a spec's \"device\" \"sms\") need a GPU: this multifit is built without CUDA (MULTIFIT_CUDA=OFF)");
}
}  // namespace

SmGroups sm_groups(int) { no_cuda(); }
GreenContext::~GreenContext() = default;
void* GreenContext::create_stream() const { no_cuda(); }
std::vector<std::shared_ptr<GreenContext>> make_green_contexts(int, const SmGroups&,
                                                               const std::vector<int>&) {
  no_cuda();
}
#endif

}  // namespace mf
