#pragma once
// Wall-clock time for measurements: a steady clock, never adjusted.
#include <chrono>

namespace mf {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace mf
