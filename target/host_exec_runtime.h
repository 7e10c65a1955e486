#pragma once
// Host execution, part 2: the CUDA runtime API that multifit uses, on the host
// (target/host_exec.h): device memory is host memory; streams, events and
// copies are their host equivalents, in order and immediate.
//
// Stream capture (CUDA graphs) is emulated: between cudaStreamBeginCapture and
// cudaStreamEndCapture a stream's kernel launches are recorded, not run, each with
// the arguments it was given; launching the instantiated graph runs them again, in
// order. So a step replayed from its graph computes what it computes only if every
// launch's arguments are the same every step, as on a GPU. Copies, memsets and
// synchronizations of a capturing stream are refused: stricter than CUDA, which
// records copies and memsets as nodes, but a training step makes none.
#include <cstddef>
#include <functional>
#include <vector>

namespace mf::hostexec {

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorStreamCaptureUnsupported = 900
};
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
struct HostStream;
struct HostEvent;
struct HostGraph;
using cudaStream_t = HostStream*;
using cudaEvent_t = HostEvent*;
using cudaGraph_t = HostGraph*;
using cudaGraphExec_t = HostGraph*;
enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1
};

const char* cudaGetErrorString(cudaError_t status);
cudaError_t cudaGetLastError();
cudaError_t cudaSetDevice(int device);
cudaError_t cudaMalloc(void** p, size_t bytes);
cudaError_t cudaFree(void* p);
// the host's available and physical memory
cudaError_t cudaMemGetInfo(size_t* free, size_t* total);
cudaError_t cudaMallocHost(void** p, size_t bytes);
cudaError_t cudaFreeHost(void* p);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream);
cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t stream);
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                              size_t width, size_t rows, cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemset2DAsync(void* dst, size_t pitch, int value, size_t width, size_t rows,
                              cudaStream_t stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaEventCreate(cudaEvent_t* event);
constexpr unsigned cudaEventDefault = 0, cudaEventBlockingSync = 1, cudaEventDisableTiming = 2;
// the flags change nothing here
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
constexpr unsigned cudaStreamNonBlocking = 1;
// How a host thread waits for the device: kept and read back, with nothing to schedule here (a host
// execution's calls return finished).
constexpr unsigned cudaDeviceScheduleAuto = 0, cudaDeviceScheduleSpin = 1,
                   cudaDeviceScheduleYield = 2, cudaDeviceScheduleBlockingSync = 4,
                   cudaDeviceScheduleMask = 7;
cudaError_t cudaSetDeviceFlags(unsigned flags);
cudaError_t cudaGetDeviceFlags(unsigned* flags);

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                 unsigned long long flags);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
// The graphs this process has instantiated so far: what a test counts to see when capture happens.
size_t graphs_instantiated();

// A kernel launch, ready to run: what a capture records.
using LaunchRecord = std::function<cudaError_t()>;
// Runs `launch` now, or records it when `stream` is capturing.
cudaError_t launch_on(cudaStream_t stream, LaunchRecord launch);

}  // namespace mf::hostexec
