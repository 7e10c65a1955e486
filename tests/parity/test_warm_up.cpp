// A fit warmed up before its start (PackFit::warm_up, what the runner does before its start
// barrier) gives the numbers of a fit that is not, bit for bit: the warm-up's steps and evaluation
// leave the model as they found it. Checked on the CPU backend and on the device under test with
// graphs, where the warm-up also captures the step graphs, so that the fit's first step is an
// ordinary one.
#include <algorithm>
#include <cstring>

#include "data/dataset.h"
#include "nn/fit.h"
#include "tests/parity/backend_pair.h"
#include "tests/parity/device_under_test.h"
#include "tests/parity/test_sizes.h"
#include "tests/training_specs.h"

namespace mf::test {
namespace {

struct Fitted {
  std::vector<FitResult> fits;
  std::vector<float> params;  // every member's
};

Fitted fit_pack_of(Backend& backend, const std::vector<ModelSpec>& specs, const Dataset& data,
                   bool warm_up, bool graphs, bool timeline = false) {
  DeviceData resident(backend, data);
  Model pack(specs, backend);
  FitOptions options;
  options.graphs = graphs;
  options.timeline = timeline;
  PackFit fit(pack, resident, options);
  if (warm_up) fit.warm_up();
  while (!fit.done()) {
    fit.launch_epoch();
    fit.end_epoch();
  }
  return {fit.take_results(), pack.get_all_params()};
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_warm_up_changes_nothing(Backend& backend, bool graphs) {
  SCOPED_TRACE(backend.name() + (graphs ? ", graphs" : ""));
  const DataSplit data = make_synthetic(teacher(4));
  const std::vector<ModelSpec> specs = {classifier(1, 1e-2f), classifier(2, 3e-3f)};
  const Fitted cold = fit_pack_of(backend, specs, data.train, false, graphs);
  const Fitted warm = fit_pack_of(backend, specs, data.train, true, graphs);
  EXPECT_TRUE(cold.params == warm.params) << "the final weights differ";
  ASSERT_EQ(cold.fits.size(), warm.fits.size());
  for (size_t z = 0; z < cold.fits.size(); ++z) {
    EXPECT_EQ(cold.fits[z].samples, warm.fits[z].samples);
    ASSERT_EQ(cold.fits[z].epochs.size(), 2u);
    ASSERT_EQ(warm.fits[z].epochs.size(), 2u);
    for (size_t e = 0; e < 2; ++e) {
      const EpochMetrics &c = cold.fits[z].epochs[e], &w = warm.fits[z].epochs[e];
      EXPECT_TRUE(same_bits(c.loss, w.loss))
          << "member " << z << " epoch " << e + 1 << ": " << c.loss << " vs " << w.loss;
      EXPECT_TRUE(same_bits(c.accuracy, w.accuracy)) << "member " << z << " epoch " << e + 1;
      EXPECT_TRUE(same_bits(c.val_loss, w.val_loss)) << "member " << z << " epoch " << e + 1;
      EXPECT_TRUE(same_bits(c.val_accuracy, w.val_accuracy))
          << "member " << z << " epoch " << e + 1;
    }
  }
}

TEST(WarmUp, TheFitGivesTheNumbersOfAFitWithout) {
  CpuBackend cpu;
  expect_warm_up_changes_nothing(cpu, false);
  std::string why;
  std::unique_ptr<Backend> device = make_device_under_test(why);
  if (!device) GTEST_SKIP() << "checked on the cpu only: " << why;
  expect_warm_up_changes_nothing(*device, false);
  expect_warm_up_changes_nothing(*device, true);
}

// With graphs, a cold fit's first step captures and instantiates its graph; a warmed one replays
// the graph the warm-up made. Its span is then no outlier: at most twice the slowest of the other
// steps. A wall-clock test on a shared machine: one step descheduled for a moment looks like an
// outlier, so it passes when one of three fits' first steps is ordinary. A first step that captures
// is slow in every fit, and fails all three.
TEST(WarmUp, TheFirstStepOfAWarmedFitIsAnOrdinaryStep) {
  std::string why;
  std::unique_ptr<Backend> device = make_device_under_test(why);
  if (!device) GTEST_SKIP() << why;
  const DataSplit data = make_synthetic(teacher(4));
  ModelSpec spec = classifier(1, 1e-2f);
  // 11 steps: 10 of 32 rows and one of 10 (at the small sizes 3 and one of 4)
  spec.fit = {1, 32, 0.f, true};
  const size_t steps_of_the_fit = (teacher_rows() + 31) / 32;
  const auto span = [](const Interval& i) { return i.end_s - i.begin_s; };
  std::string attempts;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    const Fitted warm = fit_pack_of(*device, {spec}, data.train, true, true, true);
    const Track& steps = warm.fits.front().steps;
    ASSERT_EQ(steps.size(), steps_of_the_fit);
    double slowest_other = 0;
    for (size_t s = 1; s < steps.size(); ++s)
      slowest_other = std::max(slowest_other, span(steps[s]));
    if (span(steps[0]) <= 2 * slowest_other) return;
    attempts += " fit " + std::to_string(attempt) + ": step 1 took " +
                std::to_string(span(steps[0]) * 1e6) + " us, the slowest other " +
                std::to_string(slowest_other * 1e6) + " us;";
  }
  ADD_FAILURE() << "the first step was an outlier in three fits:" << attempts;
}

}  // namespace
}  // namespace mf::test
