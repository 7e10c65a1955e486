#include "kernels/host_exec.h"

#include <unistd.h>

#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "kernels/float_mode.h"

namespace mf::hostexec {

thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace {

// A pool of OS threads, one per CUDA thread of a block, reused across launches.
// A launch hands every worker the kernel body; each worker walks the blocks in
// order, and a barrier after every block keeps block b+1 from starting (and
// from touching the block's __shared__ storage) while b is still running.
class BlockRunner {
 public:
  static BlockRunner& instance() {
    static BlockRunner runner;
    return runner;
  }

  ~BlockRunner() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  void run(dim3 grid, dim3 block, const std::function<void()>& body) {
    std::lock_guard one_launch_at_a_time(launch_mutex_);
    const unsigned threads = block.x * block.y * block.z;
    std::unique_lock lock(mutex_);
    while (workers_.size() < threads) workers_.emplace_back([this, id = unsigned(workers_.size())] { work(id); });
    barrier_.emplace(threads);
    grid_ = grid;
    block_ = block;
    body_ = &body;
    active_ = pending_ = threads;
    ++generation_;
    wake_.notify_all();
    done_.wait(lock, [&] { return pending_ == 0; });
  }

  std::barrier<>& barrier() { return *barrier_; }

 private:
  void work(unsigned id) {
    flush_denormals_on_this_thread();  // as the CPU backend's thread does, so both compute alike
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        if (id >= active_) continue;
      }
      blockDim = block_;
      gridDim = grid_;
      threadIdx = dim3(id % block_.x, id / block_.x % block_.y, id / (block_.x * block_.y));
      for (unsigned z = 0; z < grid_.z; ++z)
        for (unsigned y = 0; y < grid_.y; ++y)
          for (unsigned x = 0; x < grid_.x; ++x) {
            blockIdx = dim3(x, y, z);
            (*body_)();
            barrier_->arrive_and_wait();
          }
      std::lock_guard lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::mutex launch_mutex_, mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  std::optional<std::barrier<>> barrier_;
  const std::function<void()>* body_ = nullptr;
  dim3 grid_, block_;
  unsigned active_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

using Clock = std::chrono::steady_clock;

}  // namespace

struct HostStream {};
struct HostEvent {
  Clock::time_point at;
};

void __syncthreads() { BlockRunner::instance().barrier().arrive_and_wait(); }

cudaError_t run_grid(dim3 grid, dim3 block, const std::function<void()>& body) {
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  const bool valid = grid.x > 0 && grid.y > 0 && grid.z > 0 && grid.x <= 0x7fffffffu && grid.y <= 65535 &&
                     grid.z <= 65535 && threads > 0 && threads <= 1024 && block.z <= 64;
  if (!valid) return cudaErrorInvalidConfiguration;
  BlockRunner::instance().run(grid, block, body);
  return cudaSuccess;
}

const char* cudaGetErrorString(cudaError_t status) {
  switch (status) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    default: return "invalid argument";
  }
}

cudaError_t cudaGetLastError() { return cudaSuccess; }
cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : cudaErrorInvalidValue; }

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

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind, cudaStream_t) {
  std::memcpy(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t) {
  std::memset(dst, value, bytes);
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
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  *event = new HostEvent;
  return cudaSuccess;
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
