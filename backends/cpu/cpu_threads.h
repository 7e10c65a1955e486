#pragma once
// The cpu backend's host threads: a team per backend, the calling thread and helpers of its own,
// that runs an operation's parts, each part once, whichever thread takes it.
//
// Built for a machine that is never idle (a browser, an IDE, another job, the other models of a
// run). An OpenMP team hands each thread its parts in advance and waits at a barrier for the
// slowest, so a helper the kernel has descheduled stalls the caller for a time slice, and its idle
// threads spin: on two cores beside two busy processes, a model on two threads trained 7.6x slower
// than on one. Here the parts are claimed one at a time from a shared counter: the caller starts
// at once and takes every part no helper has claimed, so a helper that is late costs nothing but
// the part it holds. An idle helper spins for kSpin_s, so that the next operation of a step finds
// it awake, then sleeps on a futex until the next operation is published. The caller claims parts
// from the front and helpers from the back, so that on a quiet machine each thread takes about the
// same parts every step and finds their data in its own cache (an optimizer's slots, the gradient a
// product's tile wrote). Measured against OpenMP
// (active and passive waits) and oneTBB's arenas in benchmarks/results/2026-12-06-cpu-threads/.
//
// Which part computes what is fixed by the caller, never by timing, so the numbers a team gives
// are those of the same parts run one after another.
#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

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

// How long an idle helper spins before it sleeps: longer than the gap between two operations of a
// step (the host work between them, a few microseconds), short beside a time slice.
inline constexpr double kSpin_s = 50e-6;

class Team {
 public:
  // The most parts one run takes (a pack's members beyond it go several to a part).
  static constexpr int kMostParts = (1 << 20) - 1;

  // `threads` (at least 1): the caller and threads - 1 helpers, started at the first run that
  // spreads over them (a model that never splits starts none). Helpers flush denormals
  // (runtime/float_mode.h) before their first part.
  explicit Team(int threads);
  ~Team();
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  int size() const { return threads_; }
  // The runs handed to the helpers so far (of two parts or more, on more than one thread).
  int64_t shared_runs() const { return shared_runs_; }
  // Starts the helpers if they are not yet started; they sleep until a run needs them.
  void start();

  // work(part) for every part in [0, parts), each once, on the calling thread and whichever helpers
  // come; returns when all have run. With one thread, or one part, on the caller alone at no cost.
  // More than kMostParts is a std::invalid_argument. An exception thrown by work ends the process
  // (std::terminate): the work given is the backend's own arithmetic, which does not throw. One
  // thread at a time calls it (the backend's).
  void run(int parts, const std::function<void(int part)>& work);

 private:
  void help();
  // Claims the next part of the published run from its front (the caller) or back (a helper), or
  // returns -1 when none is left.
  int claim(bool from_front);
  void run_claimed(int part);

  const int threads_;
  std::vector<std::thread> helpers_;
  // The published run: its generation (the high 24 bits) and the parts not yet claimed, [front,
  // back) (20 bits each), one word, so that a claim is one compare-and-swap and a helper late for
  // one run can never claim a part of the next.
  std::atomic<uint64_t> state_{0};
  // The run's work and part count, read after a claim: set before the run is published, and not
  // again until every part has finished.
  const std::function<void(int)>* work_ = nullptr;
  int parts_ = 0;
  // Futex words: published_ counts runs (helpers sleep on it), done_ the parts of this run that
  // have finished (the caller sleeps on it); sleeping_ and waiting_ say whether anyone does.
  std::atomic<uint32_t> published_{0}, done_{0}, sleeping_{0}, waiting_{0};
  std::atomic<bool> quit_{false};
  int64_t shared_runs_ = 0;
};

}  // namespace mf::cpu
