#pragma once
// Wall-clock time for measurements: a steady clock, never adjusted.
#include <chrono>

namespace mf {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Now, in seconds on the steady clock. On Linux it is CLOCK_MONOTONIC, which every process of the
// machine shares, so timestamps taken by worker processes line up with the parent's.
inline double clock_seconds() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

}  // namespace mf
