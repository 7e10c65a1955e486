// The operations of data/preprocessing.h that change values, not places: contrast and Gaussian
// noise; and HostWork, which changes nothing and costs CPU time.
#include <algorithm>
#include <bit>
#include <cmath>
#include <ctime>
#include <numbers>

#include "data/preprocessing_ops.h"

namespace mf::preprocessing {
namespace {

// A uniform double in (0, 1] of 53 bits: Box-Muller takes its logarithm.
double open_unit(Rng& rng) { return double((rng.next() >> 11) + 1) * 0x1p-53; }

// A uniform double in [0, 1) of 53 bits.
double unit(Rng& rng) { return double(rng.next() >> 11) * 0x1p-53; }

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

// HostWork's work between two readings of the clock: FNV-1a over the sample's values, round and
// round for a fixed number of steps (about a microsecond), each step depending on the one before.
constexpr int64_t kStepsPerPass = 1024;

uint64_t hash_pass(const float* values, int64_t n, uint64_t hash) {
  for (int64_t step = 0, i = 0; step < kStepsPerPass; ++step, i = i + 1 == n ? 0 : i + 1)
    hash = (hash ^ std::bit_cast<uint32_t>(values[i])) * 0x100000001b3ULL;
  return hash;
}

}  // namespace

void apply(const RandomContrast& op, const Sample& s, Rng& rng) {
  const float contrast = rng.uniform(1 - op.factor.lower, 1 + op.factor.upper);
  const int64_t channels = s.shape.channels, pixels = s.width / channels;
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0;
    for (int64_t p = 0; p < pixels; ++p) sum += s.values[p * channels + c];
    const float mean = float(sum / double(pixels));
    for (int64_t p = 0; p < pixels; ++p) {
      float& x = s.values[p * channels + c];
      x = std::clamp((x - mean) * contrast + mean, op.low, op.high);
    }
  }
}

void apply(const GaussianNoise& op, const Sample& s, Rng& rng) {
  // Box-Muller: two uniform draws give two independent standard normal values.
  for (int64_t i = 0; i < s.width; i += 2) {
    const double radius = op.stddev * std::sqrt(-2 * std::log(open_unit(rng)));
    const double angle = 2 * std::numbers::pi * unit(rng);
    s.values[i] += float(radius * std::cos(angle));
    if (i + 1 < s.width) s.values[i + 1] += float(radius * std::sin(angle));
  }
}

void apply(const HostWork& op, const Sample& s, Rng&) {
  const double end = thread_cpu_seconds() + op.microseconds * 1e-6;
  uint64_t hash = 0xcbf29ce484222325ULL;
  do hash = hash_pass(s.values, s.width, hash);
  while (thread_cpu_seconds() < end);
  // A volatile store is an effect the compiler must keep, so it must compute the hash, every pass.
  volatile uint64_t result = hash;
  (void)result;
}

}  // namespace mf::preprocessing
