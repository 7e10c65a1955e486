// Rank 0's plan of the work over MPI ranks (study/ranks.h): units by estimated cost, largest first,
// and packs bounded so that every rank gets one. The ranks themselves, under mpirun: tests/cli/test_mpi.cpp.
#include <gtest/gtest.h>

#include "study/ranks.h"

namespace mf {
namespace {

// Jobs of 20 -> `width` -> 1 for `epochs` epochs each, one of them a bad entry.
std::vector<Job> jobs_of(const std::vector<std::pair<int, int>>& width_epochs) {
  std::vector<Job> jobs(width_epochs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    ModelSpec spec;
    spec.name = "m";
    spec.name += std::to_string(i);  // (not "m" + ...: GCC 12's -Wrestrict false positive, PR 105329)
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
  EXPECT_EQ(estimated_cost(jobs[0]), 3.0 * (20 * 64 + 64 + 64 * 1 + 1));  // by hand: weights and biases of both layers
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
  const std::vector<Job> jobs = jobs_of(std::vector<std::pair<int, int>>(10, {16, 2}));  // one shape: one pack unbound
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

}  // namespace
}  // namespace mf
