#pragma once
// The start barrier of a phase: every worker thread arrives once (built, or failed to build) and
// waits; the last to arrive releases them all and notes when, so that start-up is measured apart
// from training. Workers in other processes use the same idea over pipes
// (study/modes/processes/parent.cpp).
#include <condition_variable>
#include <mutex>

#include "runtime/clock.h"

namespace mf {

class StartBarrier {
 public:
  explicit StartBarrier(int parties) : waiting_(parties) {}

  void arrive_and_wait() {
    std::unique_lock lock(mutex_);
    if (!arrive()) released_.wait(lock, [&] { return waiting_ == 0; });
  }
  // One party will never come (its thread could not start): the others need not wait for it.
  void leave() {
    std::lock_guard lock(mutex_);
    arrive();
  }
  // clock_seconds() at the release; read after the workers have gone.
  double released_s() const {
    std::lock_guard lock(mutex_);
    return released_s_;
  }

 private:
  // One party fewer to wait for; the last one releases all and notes when. mutex_ held.
  bool arrive() {
    if (--waiting_ > 0) return false;
    released_s_ = clock_seconds();
    released_.notify_all();
    return true;
  }

  mutable std::mutex mutex_;
  std::condition_variable released_;
  int waiting_;
  double released_s_ = 0;
};

}  // namespace mf
