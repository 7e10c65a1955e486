#pragma once
// The start barrier of a phase: every worker thread arrives once (built, or failed to build) and
// waits; the last to arrive releases them all and notes when, so that start-up is measured apart
// from training. Workers in other processes use the same idea over pipes
// (study/modes/processes/protocol.h).
#include <barrier>

#include "runtime/clock.h"

namespace mf {

class StartBarrier {
 public:
  explicit StartBarrier(int parties) : barrier_(parties, NoteRelease{&released_s_}) {}

  void arrive_and_wait() { barrier_.arrive_and_wait(); }
  // One party will never come (its thread could not start): the others need not wait for it.
  void leave() { barrier_.arrive_and_drop(); }
  // clock_seconds() at the release; read after the workers have gone.
  double released_s() const { return released_s_; }

 private:
  struct NoteRelease {  // run once, by the last to arrive, before any is released
    double* at;
    void operator()() noexcept { *at = clock_seconds(); }
  };

  double released_s_ = 0;
  std::barrier<NoteRelease> barrier_;
};

}  // namespace mf
