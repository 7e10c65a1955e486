#pragma once
// How long the cpu backend's operations take on this machine, and which are worth spreading over a
// team's threads (backends/cpu/cpu_threads.h).
//
// The rates are measured once per process, at the first backend made with more than one thread
// (about a millisecond): a mid-sized product's multiply-adds and an element-wise pass's floats on
// one core, each the fastest of a few tries, so that a start beside other work does not inflate
// them. An operation is estimated as a call's fixed cost plus its units at the rate: how an
// operation run once (not in a recorded step) and a pack's step are judged; a model's recorded step
// times its own operations instead (backends/cpu/cpu_backend.cpp). The estimate decides only
// whether the team runs an operation's parts at once: which parts there are is fixed by its shape
// (product_tiles), so the numbers never depend on the estimate, the thread count or the machine.
#include <cstdint>

namespace mf::cpu {

// The least time alone (estimated or measured) worth spreading over threads. The team itself costs
// little: an operation of 5 µs of arithmetic in 4 parts took 2.7 µs on two threads quiet (one
// thread: 4.9), 4.9 beside one busy process (4.8) and 5.1 beside two (7.0), on the 2-core VM
// (benchmarks/results/2026-12-06-cpu-threads/). But a real operation's parts also move its data
// between the cores' caches, which that measurement leaves out, so the bar is four times it, and a
// recorded step spreads only where its own launches measure that it pays.
inline constexpr double kLeastSpread_s = 20e-6;

class CostModel {
 public:
  // This process's rates: measured at the first call, then kept.
  static const CostModel& measured();

  // Estimated seconds on one core.
  double product(int64_t multiply_adds) const { return call_s_ + multiply_adds * mac_s_; }
  double element(int64_t floats) const { return call_s_ + floats * float_s_; }

  double mac_s() const { return mac_s_; }
  double float_s() const { return float_s_; }

 private:
  double mac_s_ = 0, float_s_ = 0, call_s_ = 0;
};

// The most pieces a product is cut into, and the least multiply-adds of a piece: a piece of 2^18
// is 5-10 µs on one core, against under 0.1 µs for a library call, so cutting costs one thread
// little.
inline constexpr int kMostTiles = 16;
inline constexpr int64_t kLeastTileMacs = int64_t(1) << 18;

// The pieces (tiles) a product of `multiply_adds` is computed in, along an output dimension of
// `span` cut at multiples of `grain`: a function of the shape alone, so that a product gives the
// same bits on any number of threads (a library may pick another kernel for a smaller product,
// which rounds differently).
int product_tiles(int64_t multiply_adds, int64_t span, int64_t grain);

}  // namespace mf::cpu
