#pragma once
// How much the models' training ran at the same time: from each model's executing intervals (its
// training steps, as fit times them with Backend::mark: CUDA events on the model's stream on a GPU,
// the clock on the CPU), the time in which at least one ran and the time in which two or more did.
// The members of a pack share their steps, so each of them brings the same track. The fraction of
// the second in the first is the run's overlap: 0 for a serial run, near 1 when every model's steps
// were always in flight together.
#include <vector>

namespace mf {

// [begin_s, end_s), in seconds on the steady clock (clock_seconds(), runtime/clock.h:
// CLOCK_MONOTONIC, one clock for all the processes of the machine, so intervals taken in several
// processes compare).
struct Interval {
  double begin_s, end_s;
};

// One model's executing intervals (its training steps), in time order; intervals may touch.
using Track = std::vector<Interval>;

struct Overlap {
  double busy_s = 0;        // time in which at least one model was executing
  double concurrent_s = 0;  // time in which two or more were
  double fraction() const;  // concurrent_s / busy_s, 0 when busy_s is 0
};

// A sweep over all tracks' interval boundaries; O(n log n) in the number of intervals. Overlapping
// intervals of one track count once (the track is one model); empty or reversed intervals hold no
// time.
Overlap measure_overlap(const std::vector<Track>& tracks);

}  // namespace mf
