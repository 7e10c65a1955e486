#include "target/host_exec_runtime.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace mf::hostexec {

using Clock = std::chrono::steady_clock;

struct HostGraph {
  std::vector<LaunchRecord> launches;  // in issue order
};
struct HostStream {
  HostGraph* capture = nullptr;  // while capturing: where its launches go
};
struct HostEvent {
  Clock::time_point at;
};

const char* cudaGetErrorString(cudaError_t status) {
  switch (status) {
    case cudaSuccess:
      return "no error";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
    case cudaErrorStreamCaptureUnsupported:
      return "operation not permitted when stream is capturing";
    default:
      return "invalid argument";
  }
}

cudaError_t cudaGetLastError() { return cudaSuccess; }
cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : cudaErrorInvalidValue; }

namespace {
std::atomic<unsigned> device_flags{cudaDeviceScheduleAuto};
std::atomic<size_t> instantiated{0};
}  // namespace
cudaError_t cudaSetDeviceFlags(unsigned flags) {
  if (flags & ~cudaDeviceScheduleMask) return cudaErrorInvalidValue;
  device_flags = flags;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceFlags(unsigned* flags) {
  *flags = device_flags;
  return cudaSuccess;
}
size_t graphs_instantiated() { return instantiated; }

cudaError_t cudaMalloc(void** p, size_t bytes) {
  *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFree(void* p) {
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  *free = size_t(sysconf(_SC_AVPHYS_PAGES)) * page;
  *total = size_t(sysconf(_SC_PHYS_PAGES)) * page;
  return cudaSuccess;
}
cudaError_t cudaMallocHost(void** p, size_t bytes) { return cudaMalloc(p, bytes); }
cudaError_t cudaFreeHost(void* p) { return cudaFree(p); }

namespace {

bool capturing(cudaStream_t stream) { return stream && stream->capture; }

}  // namespace

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind,
                            cudaStream_t stream) {
  if (capturing(stream)) return cudaErrorStreamCaptureUnsupported;
  std::memcpy(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t stream) {
  if (capturing(stream)) return cudaErrorStreamCaptureUnsupported;
  std::memset(dst, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpy2DAsync(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                              size_t width, size_t rows, cudaMemcpyKind, cudaStream_t stream) {
  if (capturing(stream)) return cudaErrorStreamCaptureUnsupported;
  for (size_t r = 0; r < rows; ++r)
    std::memcpy(static_cast<char*>(dst) + r * dst_pitch,
                static_cast<const char*>(src) + r * src_pitch, width);
  return cudaSuccess;
}
cudaError_t cudaMemset2DAsync(void* dst, size_t pitch, int value, size_t width, size_t rows,
                              cudaStream_t stream) {
  if (capturing(stream)) return cudaErrorStreamCaptureUnsupported;
  for (size_t r = 0; r < rows; ++r) std::memset(static_cast<char*>(dst) + r * pitch, value, width);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned) {
  *stream = new HostStream;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  delete stream;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return capturing(stream) ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
  if (!stream || capturing(stream)) return cudaErrorInvalidValue;
  stream->capture = new HostGraph;
  return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  if (!capturing(stream)) return cudaErrorInvalidValue;
  *graph = stream->capture;
  stream->capture = nullptr;
  return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  *exec = new HostGraph(*graph);
  ++instantiated;
  return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (capturing(stream)) return cudaErrorStreamCaptureUnsupported;
  for (const LaunchRecord& launch : exec->launches)
    if (const cudaError_t status = launch(); status != cudaSuccess) return status;
  return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}

cudaError_t launch_on(cudaStream_t stream, LaunchRecord launch) {
  if (!capturing(stream)) return launch();
  stream->capture->launches.push_back(std::move(launch));
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  *event = new HostEvent;
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned) {
  return cudaEventCreate(event);
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  event->at = Clock::now();
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  *ms = std::chrono::duration<float, std::milli>(end->at - start->at).count();
  return cudaSuccess;
}

}  // namespace mf::hostexec
