#pragma once
// Whether a model's recorded step (a CPU "graph", replayed every training step) runs faster spread
// over its backend's team or on the calling thread alone, measured on the step's own launches.
//
// An estimate cannot tell: a product a helper computes leaves its output in the helper's cache, so
// the operations after it on the caller read it from another core (on the 2-core VM a 784-100
// layer's forward product split over two threads took 43 µs instead of 53, and the optimizer after
// it 73 µs instead of 28), and on a busy machine a helper may not run at all. So the step decides
// by measuring: its launches alternate between the two ways kTrials times each, and it spreads from
// then on only where the median of its spread launches beats the median alone by kMargin. After
// every kRetrial_s of its launches it measures again, so a machine that grows busier, or quieter,
// is followed.
// The choice changes no number (backends/cpu/cpu_backend.h): only how long a step takes.
#include <algorithm>
#include <array>

namespace mf::cpu {

class SpreadChoice {
 public:
  static constexpr int kTrials = 8;        // launches each way in a trial
  static constexpr double kRetrial_s = 2;  // of the step's launches between two trials
  static constexpr double kMargin = 0.95;  // spread must take at most this share of alone's time

  // Whether the next launch spreads. The first runs alone: it warms the caches and generates the
  // products' kernels; the first trial follows it.
  bool spreads() const { return trial_ >= 0 ? trial_ % 2 == 1 : spread_; }
  // The launch took `seconds`.
  void launched(double seconds) {
    if (trial_ < 0) {
      since_trial_s_ += seconds;
      if (since_trial_s_ >= kRetrial_s) trial_ = 0, since_trial_s_ = 0;
      return;
    }
    (trial_ % 2 ? spread_s_ : alone_s_)[size_t(trial_ / 2)] = seconds;
    if (++trial_ < 2 * kTrials) return;
    spread_ = median(spread_s_) < kMargin * median(alone_s_);
    trial_ = -1;
  }

 private:
  static double median(std::array<double, kTrials> s) {
    std::nth_element(s.begin(), s.begin() + kTrials / 2, s.end());
    return s[kTrials / 2];
  }

  int trial_ = -1;                     // the launch into the trial under way; -1 for none
  double since_trial_s_ = kRetrial_s;  // so that the first launch starts one
  bool spread_ = false;
  std::array<double, kTrials> alone_s_{}, spread_s_{};
};

}  // namespace mf::cpu
