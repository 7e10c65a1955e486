#pragma once
// Whether a model's recorded step (a CPU "graph", replayed every training step) runs faster spread
// over its backend's team or on the calling thread alone, measured on the step's own launches.
//
// An estimate cannot tell: a product a helper computes leaves its output in the helper's cache, so
// the operations after it on the caller read it from another core (on the 2-core VM a 784-100
// layer's forward product split over two threads took 43 µs instead of 53, and the optimizer after
// it 73 µs instead of 28), and on a busy machine a helper may not run at all. So the step decides
// by measuring: its launches alternate between the two ways kTrials times each, and it spreads from
// then on only where its spread launches took at most kMargin of the time of those alone, in all:
// not their medians, since on a busy machine a helper the kernel preempts while it holds a part
// keeps the caller waiting for the rest of its time slice, a few launches in many, each costing
// milliseconds. It measures again after 0.125 s of its launches, then after twice as long each
// time up to every kRetrial_s, so a machine that grows busier, or quieter, is followed.
// The choice changes no number (backends/cpu/cpu_backend.h): only how long a step takes.
#include <algorithm>
#include <array>

namespace mf::cpu {

class SpreadChoice {
 public:
  static constexpr int kTrials = 12;  // launches each way in a trial
  // The step's launches between two trials: kFirstRetrial_s after the first, twice as long after
  // each, up to kRetrial_s (a first trial may fall while the helpers are still being placed).
  static constexpr double kFirstRetrial_s = 0.125, kRetrial_s = 2;
  static constexpr double kMargin = 0.95;  // spread must take at most this share of alone's time

  // Whether the next launch spreads. A trial starts with the first launch (the step has warmed its
  // caches and kernels before it asks).
  bool spreads() const { return trial_ >= 0 ? trial_ % 2 == 1 : spread_; }
  // The launch took `seconds`.
  void launched(double seconds) {
    if (trial_ < 0) {
      since_trial_s_ += seconds;
      if (since_trial_s_ >= retrial_s_)
        trial_ = 0, since_trial_s_ = 0, retrial_s_ = std::min(2 * retrial_s_, kRetrial_s);
      return;
    }
    (trial_ % 2 ? spread_s_ : alone_s_)[size_t(trial_ / 2)] = seconds;
    if (++trial_ < 2 * kTrials) return;
    spread_ = sum(spread_s_) < kMargin * sum(alone_s_);
    trial_ = -1;
  }

 private:
  static double sum(const std::array<double, kTrials>& s) {
    double total = 0;
    for (double x : s) total += x;
    return total;
  }

  int trial_ = 0;             // the launch into the trial under way; -1 for none
  double since_trial_s_ = 0;  // the launches' seconds since the last trial ended
  double retrial_s_ = kFirstRetrial_s;
  bool spread_ = false;
  std::array<double, kTrials> alone_s_{}, spread_s_{};
};

}  // namespace mf::cpu
