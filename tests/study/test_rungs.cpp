// The scheduler's rules (study/sweep/rungs.h) against hand-computed cases of their sources'
// definitions (Ray Tune's ASHA cutoff, Optuna's SuccessiveHalvingPruner), and its table's waiting:
// a verdict waits for the trials before it, never for those after, and a resumed run's ended trials
// count.
#include "study/sweep/rungs.h"

#include <cmath>

#include <gtest/gtest.h>

#include "study/report/report.h"

namespace mf {
namespace {

using V = RungJudge::Verdict;

SchedulerSpec spec(SchedulerKind type, bool maximize, int factor = 3) {
  SchedulerSpec s;
  s.type = type;
  s.maximize = maximize;
  s.reduction_factor = factor;
  s.max_epochs = 9;  // rungs at 1 and 3
  return s;
}

TEST(RungRules, AshaStopsWhatIsWorseThanTheEarlierValuesQuantile) {
  // numpy.percentile([0.1, 0.2, 0.3, 0.4], 66.67) = 0.3 + 0.0001 * ... ~ 0.30001: (1 - 1/3) of the
  // way.
  const SchedulerSpec max = spec(SchedulerKind::asha, true);
  EXPECT_EQ(rung_verdict(max, 0.29, {0.1, 0.2, 0.3, 0.4}), V::stop);
  EXPECT_EQ(rung_verdict(max, 0.31, {0.4, 0.1, 0.3, 0.2}), V::go_on);  // order does not matter
  // Smaller is better: the cutoff is the 33.3rd percentile, 0.2 here (Ray negates the values).
  const SchedulerSpec min = spec(SchedulerKind::asha, false);
  EXPECT_EQ(rung_verdict(min, 0.21, {0.1, 0.2, 0.3, 0.4}), V::stop);
  EXPECT_EQ(rung_verdict(min, 0.19, {0.1, 0.2, 0.3, 0.4}), V::go_on);
  // Linear between neighbours: [1, 2] at 75% (reduction factor 4) is 1.75.
  const SchedulerSpec four = spec(SchedulerKind::asha, true, 4);
  EXPECT_EQ(rung_verdict(four, 1.74, {1, 2}), V::stop);
  EXPECT_EQ(rung_verdict(four, 1.76, {1, 2}), V::go_on);
  // The first goes on; a NaN value stops, a NaN among the earlier is left out.
  EXPECT_EQ(rung_verdict(max, 0.0, {}), V::go_on);
  EXPECT_EQ(rung_verdict(max, NAN, {}), V::stop);
  EXPECT_EQ(rung_verdict(max, 0.5, {NAN, NAN}), V::go_on);
}

TEST(RungRules, SuccessiveHalvingKeepsTheBestOfEveryFactorItselfIncluded) {
  const SchedulerSpec max = spec(SchedulerKind::successive_halving, true);
  // n = 3: the best 3 // 3 = 1 goes on.
  EXPECT_EQ(rung_verdict(max, 0.6, {0.5, 0.7}), V::stop);
  EXPECT_EQ(rung_verdict(max, 0.8, {0.5, 0.7}), V::go_on);
  EXPECT_EQ(rung_verdict(max, 0.7, {0.5, 0.7}), V::go_on);  // a tie with the best is the best
  // n = 2: 2 // 3 is none, and Optuna then keeps the best one.
  EXPECT_EQ(rung_verdict(max, 0.6, {0.5}), V::go_on);
  EXPECT_EQ(rung_verdict(max, 0.4, {0.5}), V::stop);
  // n = 6, smaller is better: the best 2 go on.
  const SchedulerSpec min = spec(SchedulerKind::successive_halving, false);
  EXPECT_EQ(rung_verdict(min, 0.25, {0.1, 0.2, 0.3, 0.4, 0.5}), V::stop);
  EXPECT_EQ(rung_verdict(min, 0.15, {0.1, 0.2, 0.3, 0.4, 0.5}), V::go_on);
}

TEST(RungTable, AVerdictWaitsForTheTrialsBeforeItOnly) {
  RungTable table(spec(SchedulerKind::asha, true), {0, 1, 2});
  EXPECT_TRUE(table.judges(1, 1));
  EXPECT_TRUE(table.judges(1, 3));
  EXPECT_FALSE(table.judges(1, 2));
  EXPECT_FALSE(table.judges(1, 9));                 // the last epoch is no rung
  EXPECT_EQ(table.judge(2, 1, 0.5), V::undecided);  // 0 and 1 have not reached it
  EXPECT_EQ(table.judge(1, 1, 0.9), V::undecided);  // 0 has not
  EXPECT_EQ(table.judge(0, 1, 0.6), V::go_on);      // the first: nothing to wait for
  EXPECT_EQ(table.verdict(1, 1), V::go_on);         // 0.9 against {0.6}
  EXPECT_EQ(table.verdict(2, 1), V::stop);          // 0.5 against {0.6, 0.9}
  // A trial that ended short of a rung is waited for no more.
  EXPECT_EQ(table.judge(1, 3, 0.95), V::undecided);
  table.ended(0);
  EXPECT_EQ(table.verdict(1, 3), V::go_on);
}

TEST(RungTable, AResumedRunsEndedTrialsCountWithTheirRungs) {
  RungTable table(spec(SchedulerKind::asha, true), {0, 1});
  ModelReport ended;
  ended.index = 0;
  ended.fit.rungs = {{1, 0.8, true}, {3, 0.85, false}};
  table.record_ended(ended);
  EXPECT_EQ(table.judge(1, 1, 0.7), V::stop);  // 0.7 against {0.8}
}

TEST(RungTable, HyperbandsBracketsCompeteApart) {
  SchedulerSpec s = spec(SchedulerKind::hyperband, true);
  s.max_epochs = 9;  // brackets: 0 (rungs 1, 3), 1 (rung 3), 2 (none)
  RungTable table(s, {0, 1, 2, 3});
  EXPECT_EQ(s.brackets(), 3);
  EXPECT_FALSE(table.judges(1, 1));
  EXPECT_EQ(table.judge(1, 3, 0.1), V::go_on);      // bracket 1's first
  EXPECT_EQ(table.judge(3, 1, 0.2), V::undecided);  // bracket 0: waits for 0
  EXPECT_EQ(table.judge(0, 1, 0.9), V::go_on);
  EXPECT_EQ(table.verdict(3, 1), V::stop);
}

}  // namespace
}  // namespace mf
