#pragma once
// The cpu backend's host threads: an OpenMP team per call, each thread with denormals flushed
// (runtime/float_mode.h), the work split into pieces fixed by the thread count alone, so that
// which thread computes what never depends on timing.
#include <cstdint>
#include <functional>

namespace mf::cpu {

// Piece `index` of `count` equal pieces of one operation: the whole of it when count is 1.
struct Part {
  int index = 0, count = 1;
};

// Part `part`'s range [begin, end) of [0, n): equal pieces, each but the last a multiple of `grain`
// (so that a vectorized loop splits where it would step anyway), some of them empty when n is
// small.
struct Range {
  int64_t begin, end;
  int64_t size() const { return end - begin; }
};
Range piece(int64_t n, Part part, int64_t grain = 1);

// Runs work(thread, team) on a team of up to `threads` threads, thread 0 the caller, and returns
// when all have; with one thread, on the caller alone, at no cost. The team may be smaller than
// asked (OMP_THREAD_LIMIT): work covers its parts with each_part. Threads it starts flush denormals
// first. An exception thrown by work ends the process (std::terminate): the work given is the
// backend's own arithmetic, which does not throw.
void on_threads(int threads, const std::function<void(int thread, int team)>& work);
// Inside on_threads's work: waits until every thread of the team has reached it.
void team_barrier();

// f(part) for the parts of `count` that thread `thread` of a team of `team` takes: thread, thread +
// team, ...: every part once over the team, whatever its size.
template <class F>
void each_part(int thread, int team, int count, F f) {
  for (int p = thread; p < count; p += team) f(Part{p, count});
}

}  // namespace mf::cpu
