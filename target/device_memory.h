#pragma once
// Device memory for pools and data sets (cudaMalloc), and pinned host memory for reading metrics
// back and for the input pipeline's uploads, for both targets (target/target.h).
#include <atomic>
#include <cstddef>

#include "target/target.h"
#include "runtime/bytes.h"
#include "runtime/error.h"
#include "runtime/memory_pool.h"

namespace mf::MF_TARGET {

class DeviceUpstream final : public Upstream {
 public:
  void* allocate(size_t bytes) override {
    void* p = nullptr;
    const cudaError_t status = cudaMalloc(&p, bytes);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // not sticky: the device is still usable
      size_t free = 0, total = 0;
      cudaMemGetInfo(&free, &total);
      throw OutOfMemory("the device cannot give " + format_bytes_exact(bytes) + ": " +
                        format_bytes_exact(free) + " free of " + format_bytes(total) +
                        " (other models or processes hold the rest)");
    }
    MF_CUDA_CHECK(status);
    in_use_ += bytes;
    return p;
  }
  void deallocate(void* p, size_t bytes) override {
    cudaFree(p);
    in_use_ -= bytes;
  }
  size_t in_use_bytes() const override { return in_use_; }

 private:
  std::atomic<size_t> in_use_{0};
};

// Page-locked host memory: reading a few numbers back is one short DMA, and a copy from it is
// asynchronous (the input pipeline's ring slots). OutOfMemory when the host cannot lock that much.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t bytes) : bytes_(bytes) {
    const cudaError_t status = cudaMallocHost(&data_, bytes);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // not sticky
      throw OutOfMemory("the host cannot give " + format_bytes_exact(bytes) +
                        " of page-locked memory");
    }
    MF_CUDA_CHECK(status);
  }
  ~PinnedBuffer() { cudaFreeHost(data_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_;
};

}  // namespace mf::MF_TARGET
