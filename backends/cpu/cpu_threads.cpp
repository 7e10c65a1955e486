#include "backends/cpu/cpu_threads.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <exception>
#include <stdexcept>
#include <string>

#include "runtime/clock.h"
#include "runtime/float_mode.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MF_CPU_RELAX() _mm_pause()
#else
#define MF_CPU_RELAX() ((void)0)
#endif

namespace mf::cpu {
namespace {

// The state word's fields: generation << 40 | front << 20 | back. The caller claims parts from the
// front, helpers from the back, until they meet.
constexpr int kFieldBits = 20;
constexpr uint64_t kFieldMask = (uint64_t(1) << kFieldBits) - 1;
uint64_t state_of(uint64_t generation, uint64_t front, uint64_t back) {
  return generation << (2 * kFieldBits) | front << kFieldBits | back;
}
uint64_t generation_of(uint64_t state) { return state >> (2 * kFieldBits); }
int front_of(uint64_t state) { return int((state >> kFieldBits) & kFieldMask); }
int back_of(uint64_t state) { return int(state & kFieldMask); }

void futex_wait(std::atomic<uint32_t>& word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}
void futex_wake(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}

// Spins while changed() is false, for at most kSpin_s; whether it changed. It yields the core
// between rounds: on an idle core that returns at once, but where other work waits for the core
// (the caller this thread is waiting for, or another process) it runs first. Spinning without
// yielding, a team on two cores beside one busy process took an operation of 20 µs in 30 µs, one
// thread alone in 20; yielding, in 20 (benchmarks/results/2026-12-06-cpu-threads/).
template <class F>
bool spin_until(F changed) {
  const Clock::time_point start = Clock::now();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (changed()) return true;
      MF_CPU_RELAX();
    }
    if (seconds_since(start) > kSpin_s) return changed();
    sched_yield();
  }
}

}  // namespace

Range piece(int64_t n, Part part, int64_t grain) {
  const int64_t grains = (n + grain - 1) / grain;
  const int64_t per = (grains + part.count - 1) / part.count;  // grains per part, rounded up
  const int64_t begin = std::min(n, int64_t(part.index) * per * grain);
  return {begin, std::min(n, begin + per * grain)};
}

Team::Team(int threads) : threads_(std::max(1, threads)) {}

Team::~Team() {
  quit_ = true;
  published_.fetch_add(1);
  futex_wake(published_);
  for (std::thread& helper : helpers_) helper.join();
}

void Team::start() {
  if (!helpers_.empty()) return;
  helpers_.reserve(size_t(threads_ - 1));
  for (int i = 1; i < threads_; ++i) helpers_.emplace_back([this] { help(); });
}

int Team::claim(bool from_front) {
  uint64_t state = state_.load(std::memory_order_acquire);
  for (;;) {
    const int front = front_of(state), back = back_of(state);
    if (front >= back) return -1;
    const int part = from_front ? front : back - 1;
    const uint64_t claimed = from_front ? state_of(generation_of(state), front + 1, back)
                                        : state_of(generation_of(state), front, back - 1);
    if (state_.compare_exchange_weak(state, claimed, std::memory_order_acq_rel)) return part;
  }
}

void Team::run_claimed(int part) {
  try {
    (*work_)(part);
  } catch (...) {
    std::terminate();  // documented: the backend's arithmetic does not throw
  }
}

void Team::run(int parts, const std::function<void(int)>& work) {
  if (threads_ == 1 || parts <= 1) {
    for (int p = 0; p < parts; ++p) work(p);
    return;
  }
  start();
  ++shared_runs_;
  // No helper holds a part of the last run (the caller waited for every one), so the work and the
  // count can be set before the new generation is published.
  work_ = &work;
  parts_ = parts;
  done_.store(0, std::memory_order_relaxed);
  if (parts > kMostParts)
    throw std::invalid_argument("cpu team: " + std::to_string(parts) + " parts, over " +
                                std::to_string(kMostParts));
  const uint64_t generation = generation_of(state_.load(std::memory_order_relaxed)) + 1;
  state_.store(state_of(generation, 0, uint64_t(parts)), std::memory_order_release);
  published_.fetch_add(1);
  if (sleeping_.load() > 0) futex_wake(published_);
  for (int part; (part = claim(true)) >= 0; done_.fetch_add(1)) run_claimed(part);
  // What is left is in the helpers' hands: parts they claimed and are running.
  const auto finished = [&] { return int(done_.load(std::memory_order_acquire)) >= parts; };
  while (!spin_until(finished)) {
    waiting_.store(1);
    const uint32_t done = done_.load();
    if (int(done) < parts) futex_wait(done_, done);
    waiting_.store(0);
  }
}

void Team::help() {
  flush_denormals_on_this_thread();
  uint32_t seen = published_.load();
  for (;;) {
    for (int part; (part = claim(false)) >= 0;) {
      run_claimed(part);
      if (int(done_.fetch_add(1)) + 1 == parts_ && waiting_.load() != 0) futex_wake(done_);
    }
    if (quit_) return;
    if (!spin_until([&] { return published_.load(std::memory_order_acquire) != seen; })) {
      sleeping_.fetch_add(1);
      if (published_.load() == seen) futex_wait(published_, seen);
      sleeping_.fetch_sub(1);
    }
    seen = published_.load(std::memory_order_acquire);
  }
}

}  // namespace mf::cpu
