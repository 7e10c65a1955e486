// Rank 0's plan of the work over MPI ranks (study/ranks/run_over_ranks.h): units by estimated cost,
// largest first, and packs bounded so that every rank gets one; and the ranks' messages
// (study/ranks/messages.h) through their text and back, field by field. The ranks themselves, under
// mpirun: tests/cli/test_mpi.cpp.
#include <gtest/gtest.h>

#include "runtime/error.h"
#include "study/ranks/messages.h"
#include "study/ranks/run_over_ranks.h"

namespace mf {
namespace {

// Jobs of 20 -> `width` -> 1 for `epochs` epochs each, one of them a bad entry.
std::vector<Job> jobs_of(const std::vector<std::pair<int, int>>& width_epochs) {
  std::vector<Job> jobs(width_epochs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    ModelSpec spec;
    spec.name = "m";
    // (not "m" + ...: GCC 12's -Wrestrict false positive, PR 105329)
    spec.name += std::to_string(i);
    spec.input = 20;
    spec.layers = {{width_epochs[i].first, Activation::relu}, {1, Activation::sigmoid}};
    spec.fit.epochs = width_epochs[i].second;
    jobs[i].index = i;
    jobs[i].name = spec.name;
    jobs[i].spec = spec;
    jobs[i].data = "synthetic:binary";
  }
  return jobs;
}

TEST(RankWork, TheCostIsEpochsTimesParameters) {
  const std::vector<Job> jobs = jobs_of({{64, 3}});
  // by hand: weights and biases of both layers
  EXPECT_EQ(estimated_cost(jobs[0]), 3.0 * (20 * 64 + 64 + 64 * 1 + 1));
  Job bad = jobs[0];
  bad.spec.reset();
  EXPECT_EQ(estimated_cost(bad), 0);
}

TEST(RankWork, UnitsGoLargestFirstAndTiesKeepSweepOrder) {
  std::vector<Job> jobs = jobs_of({{8, 1}, {64, 2}, {8, 1}, {32, 10}, {64, 2}});
  jobs.push_back(jobs[0]);
  jobs.back().index = 5;
  jobs.back().spec.reset();  // a bad entry: cost 0, last
  const std::vector<WorkUnit> units = plan_work(ModeKind::serial, jobs, RunOptions{}, 3, 1);
  std::vector<size_t> order;
  for (const WorkUnit& u : units) {
    ASSERT_EQ(u.jobs.size(), 1u);
    order.push_back(u.jobs[0]);
  }
  // 32 units for 10 epochs (7050) over 64 for 2 (2818) over 8 for 1 (177), the bad one last.
  EXPECT_EQ(order, (std::vector<size_t>{3, 1, 4, 0, 2, 5}));
}

TEST(RankWork, PacksAreBoundSoThatEveryRankGetsOne) {
  // one shape: one pack unbound
  const std::vector<Job> jobs = jobs_of(std::vector<std::pair<int, int>>(10, {16, 2}));
  RunOptions options;
  // 10 models over 3 ranks that each hold 8 at once: packs of at most ceil(10 / 3) = 4.
  std::vector<WorkUnit> units = plan_work(ModeKind::packed, jobs, options, 3, 8);
  ASSERT_EQ(units.size(), 3u);
  EXPECT_EQ(units[0].jobs, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(units[2].jobs, (std::vector<size_t>{8, 9}));
  EXPECT_GT(units[0].cost, units[2].cost);
  // A rank that holds 2 at once: packs of 2, so that each trains in one phase.
  EXPECT_EQ(plan_work(ModeKind::packed, jobs, options, 3, 2).size(), 5u);
  // --pack-size is kept as given.
  options.pack_size = 5;
  EXPECT_EQ(plan_work(ModeKind::packed, jobs, options, 3, 8).size(), 2u);
}

// A field added to a rank's figures stops this compiling: add it to the message's round trip below.
[[maybe_unused]] void field_count_guard(PartFigures& f, FromRank& m) {
  [[maybe_unused]] auto& [f_line, f_train_s, f_samples, f_concurrency, f_concurrency_reason,
                          f_training_threads, f_host_peak_rss_bytes, f_workers_peak_rss_bytes,
                          f_resumed_models] = f;
  [[maybe_unused]] auto& [m_ended, m_capacity, m_figures] = m;
}

TEST(RankMessages, AnAskCarriesItsModelsWithoutTheirTimelines) {
  ModelReport m;
  m.index = 3;
  m.name = "m3";
  m.fitted = true;
  m.fit.train_s = 1.5;
  m.fit.steps = {{1.0, 1.5}};
  m.mpi_rank = 2;
  const FromRank sent{{{m, kExitInterrupted}}, 4, std::nullopt};
  const FromRank got = message_from<FromRank>(message_text(sent));
  ASSERT_EQ(got.ended.size(), 1u);
  EXPECT_EQ(got.ended[0].exit_code, kExitInterrupted);
  EXPECT_EQ(got.ended[0].report.name, "m3");
  EXPECT_EQ(got.ended[0].report.mpi_rank, 2);
  EXPECT_EQ(got.ended[0].report.fit.train_s, 1.5);
  EXPECT_TRUE(got.ended[0].report.fit.steps.empty()) << "each rank's clock is its own";
  EXPECT_EQ(got.capacity, 4u);
  EXPECT_FALSE(got.figures);
}

TEST(RankMessages, ARanksLastMessageCarriesEveryFigure) {
  PartFigures f;
  f.line = {2, "node-3", 9.5, 0.5, 64.25, 7};
  f.train_s = 8.75;
  f.samples = 562;
  f.concurrency = 3;
  f.concurrency_reason = "streams: as the machine holds";
  f.training_threads = 6;
  f.host_peak_rss_bytes = 1048576;
  f.workers_peak_rss_bytes = 2097152;
  f.resumed_models = 4;
  const FromRank got = message_from<FromRank>(message_text(FromRank{{}, std::nullopt, f}));
  EXPECT_TRUE(got.ended.empty());
  EXPECT_FALSE(got.capacity);
  ASSERT_TRUE(got.figures);
  const PartFigures& g = *got.figures;
  EXPECT_EQ(g.line.index, 2);
  EXPECT_EQ(g.line.host, "node-3");
  EXPECT_EQ(g.line.wall_s, 9.5);
  EXPECT_EQ(g.line.startup_s, 0.5);
  EXPECT_EQ(g.line.samples_per_s, 64.25);
  EXPECT_EQ(g.line.models, 7);
  EXPECT_EQ(g.train_s, 8.75);
  EXPECT_EQ(g.samples, 562);
  EXPECT_EQ(g.concurrency, 3);
  EXPECT_EQ(g.concurrency_reason, "streams: as the machine holds");
  EXPECT_EQ(g.training_threads, 6);
  EXPECT_EQ(g.host_peak_rss_bytes, 1048576u);
  EXPECT_EQ(g.workers_peak_rss_bytes, 2097152u);
  EXPECT_EQ(g.resumed_models, 4);
  // A rank that trained nothing: its figures absent, not 0.
  const PartFigures none =
      *message_from<FromRank>(message_text(FromRank{{}, std::nullopt, PartFigures{}})).figures;
  EXPECT_FALSE(none.train_s);
  EXPECT_FALSE(none.training_threads);
  EXPECT_FALSE(none.workers_peak_rss_bytes);
  EXPECT_FALSE(none.line.wall_s);
}

TEST(RankMessages, SharesAndTheJobsToTrainAreTheirPlaces) {
  EXPECT_EQ(message_from<Share>(message_text(Share{{4, 0, 7}})).places,
            (std::vector<size_t>{4, 0, 7}));
  EXPECT_TRUE(message_from<Share>(message_text(Share{})).places.empty());
  EXPECT_EQ(message_from<ToTrain>(message_text(ToTrain{{2, 5}})).jobs, (std::vector<size_t>{2, 5}));
  EXPECT_THROW(message_from<Share>(R"({"jobs": [1]})"), nlohmann::json::exception);
}

}  // namespace
}  // namespace mf
