#pragma once
// A run's successive halving (nn/scheduler_spec.h): the one table of every trial's metric at each
// rung it reached, and the verdicts drawn from it, shared by the run's fits (nn/fit.h's RungJudge):
// its threads in streams and packed mode, its worker processes through the parent in processes
// mode.
//
// A trial's verdict at a rung depends on the trials before it in the sweep (its bracket's), never
// on which finished first: it waits until each of them has recorded its metric at that rung or
// ended without reaching it. So every mode, a run resumed from its journal, and a run on another
// machine make the same decisions. It cannot wait forever: the runner's phases and packs hold
// models in sweep order, and every trial it waits for either trains towards the rung or has ended.
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "nn/fit.h"
#include "nn/scheduler_spec.h"

namespace mf {

struct ModelReport;

// The verdict of rule `spec.type` on `value` at a rung, given the values that earlier trials of its
// bracket recorded there (NaN among them are left out; a NaN value is stopped). Pure: the rules'
// definitions, tested against hand-computed cases.
RungJudge::Verdict rung_verdict(const SchedulerSpec& spec, double value,
                                std::vector<double> earlier);

class RungTable final : public RungJudge {
 public:
  // `trials`: every trial of the run, by its place in the sweep (a shard's or a resumed run's
  // included: their records come in by record_ended).
  RungTable(SchedulerSpec spec, const std::vector<size_t>& trials);

  const std::string& metric() const override { return spec_.metric; }
  bool judges(size_t trial, int epochs) const override;
  Verdict judge(size_t trial, int epochs, std::optional<double> value) override;
  Verdict verdict(size_t trial, int epochs) override;
  void wait(double timeout_s) override;
  void ended(size_t trial) override;
  // A trial that ended in an earlier run (the journal's): its rungs as its report recorded them.
  void record_ended(const ModelReport& report);

  const SchedulerSpec& spec() const { return spec_; }

 private:
  struct Trial {
    int bracket = 0;
    std::map<int, double> values;  // by rung (its epochs)
    bool ended = false;
  };
  // Whether every trial before `trial` in its bracket has recorded at `epochs` or ended; then the
  // values they recorded there. Under the lock.
  std::optional<std::vector<double>> earlier(size_t trial, int epochs) const;

  const SchedulerSpec spec_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<size_t, Trial> trials_;  // by place in the sweep
};

}  // namespace mf
