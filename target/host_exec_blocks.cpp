#include "target/host_exec_blocks.h"

#include <barrier>
#include <cstdint>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "runtime/float_mode.h"

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
    while (workers_.size() < threads)
      workers_.emplace_back([this, id = unsigned(workers_.size())] { work(id); });
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

}  // namespace

void __syncthreads() { BlockRunner::instance().barrier().arrive_and_wait(); }

cudaError_t run_grid(dim3 grid, dim3 block, const std::function<void()>& body) {
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  const bool valid = grid.x > 0 && grid.y > 0 && grid.z > 0 && grid.x <= 0x7fffffffu &&
                     grid.y <= 65535 && grid.z <= 65535 && threads > 0 && threads <= 1024 &&
                     block.z <= 64;
  if (!valid) return cudaErrorInvalidConfiguration;
  BlockRunner::instance().run(grid, block, body);
  return cudaSuccess;
}

}  // namespace mf::hostexec
