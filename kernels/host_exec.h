#pragma once
// Host execution: runs the CUDA kernels on a machine without a GPU (DESIGN.md).
//
//   - blocks run one at a time; each CUDA thread of a block is a real OS thread,
//     so __syncthreads() is a barrier across them and a missing barrier is a
//     data race that ThreadSanitizer reports;
//   - __shared__ arrays are block-wide storage (function statics: launches are
//     serialized, blocks run one after another);
//   - threadIdx, blockIdx, blockDim, gridDim are per-thread values;
//   - device memory is host memory; streams, events and copies are their host
//     equivalents, in order and immediate.
//
// Stricter than hardware in one way that matters: there is no implicit warp
// synchrony. Laxer in others, so kernels keep to CUDA's rules by review:
// __shared__ storage starts zeroed and keeps its values between blocks (on a GPU
// it starts undefined); a __syncthreads() that not every thread of a block
// reaches is not reported (it pairs with the wrong barrier or hangs); streams
// impose no ordering to get wrong, everything runs in issue order. Atomics and
// warp shuffles are not provided: no kernel uses them, one that did would not
// compile here.
#include <cstddef>
#include <functional>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)

namespace mf::hostexec {

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

extern thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

void __syncthreads();

// ---- The CUDA runtime API that multifit uses, on the host -------------------
enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9
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
using cudaStream_t = HostStream*;
using cudaEvent_t = HostEvent*;

const char* cudaGetErrorString(cudaError_t status);
cudaError_t cudaGetLastError();
cudaError_t cudaSetDevice(int device);
cudaError_t cudaMalloc(void** p, size_t bytes);
cudaError_t cudaFree(void* p);
cudaError_t cudaMemGetInfo(size_t* free, size_t* total);  // the host's available and physical memory
cudaError_t cudaMallocHost(void** p, size_t bytes);
cudaError_t cudaFreeHost(void* p);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
constexpr unsigned cudaStreamNonBlocking = 1;

// Runs body once per CUDA thread of every block of the grid. A configuration a
// GPU would refuse (an empty grid or block, grid.y or grid.z over 65535, more
// than 1024 threads or block.z over 64) is refused the same way and runs nothing.
cudaError_t run_grid(dim3 grid, dim3 block, const std::function<void()>& body);

}  // namespace mf::hostexec
