// The answer of a comparison of modes (study/report/answer.h), from made-up runs: the mode with the
// most speedup, in words either way, with its mean slowdown; the cores every mode had; medians and
// ranges over repeats, and no ratio where the range holds 1.0; and the runs that cannot be judged,
// named before it.
#include <gtest/gtest.h>

#include "study/report/answer.h"

namespace mf {
namespace {

// A run of `mode` of one model: `wall_s` long, `speedup` over serial, its model `slowdown`x its
// solo time.
RunReport run_of(const std::string& mode, double wall_s, std::optional<double> speedup,
                 std::optional<double> slowdown, int repeat = 1) {
  RunReport run;
  run.mode = mode;
  run.wall_s = wall_s;
  run.repeat = repeat;
  run.speedup_vs_serial = speedup;
  run.models = {ModelReport{}};
  run.models[0].slowdown = slowdown;
  return run;
}

TEST(Answer, TheFastestModeAgainstSerialAndItsModelsAgainstTheirSoloRuns) {
  EXPECT_EQ(
      modes_answer({run_of("serial", 3, 1, 1), run_of("streams", 1.01, 2.96, 24.1),
                    run_of("packed", 2, 1.5, 0.5)}),
      "streams finished 2.96x sooner than serial; each model trained 24.10x slower than alone");
  EXPECT_EQ(modes_answer({run_of("serial", 3, 1, 1), run_of("packed", 2, 1.5, 0.57)}),
            "packed finished 1.50x sooner than serial; each pack took 0.57x the time its models "
            "took alone, one after another");
  EXPECT_EQ(
      modes_answer({run_of("serial", 3, 1, 1), run_of("streams", 2, 1.5, 0.8)}),
      "streams finished 1.50x sooner than serial; each model trained in 0.80x its time alone");
  EXPECT_EQ(modes_answer({run_of("serial", 1, 1, 1), run_of("processes", 4, 0.25, 1.2)}),
            "serial finished first; the fastest of the others, processes, took 4.00x as long; each "
            "model trained "
            "1.20x slower than alone");
  EXPECT_EQ(modes_answer({run_of("streams", 1, std::nullopt, std::nullopt)}), "")
      << "no serial run: nothing to say";
}

TEST(Answer, RepeatedRunsGiveTheirMedians) {
  std::vector<RunReport> runs;
  for (int r = 1; r <= 3; ++r) {
    runs.push_back(run_of("serial", 3, 1, 1, r));
    runs.push_back(run_of("streams", 1, std::vector<double>{2, 3, 2.5}[size_t(r - 1)], 4, r));
  }
  EXPECT_EQ(modes_answer(runs),
            "streams finished 2.50x sooner than serial; each model trained 4.00x slower than alone "
            "(medians of 3 runs; speedup 2.00x to 3.00x)");
  runs[0].wall_s = 0.05;  // serial's first round, too short: counted, the first named
  EXPECT_EQ(modes_answer(runs),
            "not to be judged (serial: 1 of 3 runs, run 1: wall 50ms, under 0.1 s): streams "
            "finished 2.50x sooner than serial; each model trained 4.00x slower than alone "
            "(medians of 3 runs; speedup 2.00x to 3.00x)");
  runs[3].wall_s = runs[5].wall_s = 0.02;  // streams' second and third
  EXPECT_EQ(modes_answer(runs),
            "not to be judged (serial: 1 of 3 runs, run 1: wall 50ms, under 0.1 s; streams: 2 of "
            "3 runs, run 2: wall 20ms, under 0.1 s): streams finished 2.50x sooner than serial; "
            "each model trained 4.00x slower than alone (medians of 3 runs; speedup 2.00x to "
            "3.00x)");
}

// Where the runs of the fastest mode fall on both sides of serial (a range that holds 1.0), the
// answer gives no ratio: the difference is within what the runs vary by.
TEST(Answer, ARangeThatHoldsOneIsNoClearDifference) {
  std::vector<RunReport> runs;
  const double speedups[] = {0.94, 1.07, 1.02, 0.99, 1.03};
  for (int r = 1; r <= 5; ++r) {
    runs.push_back(run_of("serial", 3, 1, 1, r));
    runs.push_back(run_of("packed", 3, speedups[r - 1], 0.51, r));
  }
  EXPECT_EQ(modes_answer(runs),
            "no clear difference between packed and serial (its speedup over serial ranged 0.94x "
            "to 1.07x); each pack took 0.51x the time its models took alone, one after another "
            "(medians of 5 runs)");
  runs[7].speedup_vs_serial = 1.004;  // 0.99 -> 1.004: one run below 1 left, still no ratio
  EXPECT_TRUE(modes_answer(runs).starts_with("no clear difference")) << modes_answer(runs);
  runs[1].speedup_vs_serial = 1.006;  // 0.94 -> 1.006: every run sooner, if barely
  EXPECT_EQ(modes_answer(runs),
            "packed finished 1.02x sooner than serial; each pack took 0.51x the time its models "
            "took alone, one after another (medians of 5 runs; speedup 1.00x to 1.07x)");
}

// On the cpu backend every mode shares the run's cores (its arrangement): the answer says how many.
TEST(Answer, ModesOnTheSameCoresSaySo) {
  std::vector<RunReport> runs = {run_of("serial", 3, 1, 1), run_of("streams", 2, 1.5, 1.2)};
  for (RunReport& run : runs) run.arrangement = Arrangement{2, 1, 2};
  runs[1].arrangement = Arrangement{2, 2, 1};
  EXPECT_EQ(modes_answer(runs),
            "streams finished 1.50x sooner than serial with the same 2 cores; each model trained "
            "1.20x slower than alone");
  runs[1].arrangement->cores = 1;  // not the same budget (runs merged from elsewhere): not said
  EXPECT_EQ(
      modes_answer(runs),
      "streams finished 1.50x sooner than serial; each model trained 1.20x slower than alone");
  for (RunReport& run : runs) run.arrangement = Arrangement{1, 1, 1};
  runs[1].speedup_vs_serial = 0.8;
  EXPECT_EQ(modes_answer(runs),
            "serial finished first with the same 1 core; the fastest of the others, streams, took "
            "1.25x as long; each model trained 1.20x slower than alone");
}

// A run under 0.1 s or on a busy machine cannot be judged: it says why, and an answer that rests on
// it (serial's or the fastest mode's) says so first; another mode's does not matter to it.
TEST(Answer, RunsTooShortOrTooBusyToJudgeAreNamedFirst) {
  RunReport busy = run_of("streams", 1, 2, 3);
  busy.machine.emplace();
  busy.machine->busy = "other processes kept 1.2 of its 2 cores busy";
  EXPECT_EQ(why_unjudged(busy), "a busy machine: other processes kept 1.2 of its 2 cores busy");
  EXPECT_EQ(why_unjudged(run_of("serial", 0.007, 1, 1)), "wall 7ms, under 0.1 s");
  EXPECT_EQ(why_unjudged(run_of("serial", 0.1, 1, 1)), "");
  EXPECT_EQ(modes_answer({run_of("serial", 0.007, 1, 1), busy, run_of("packed", 0.05, 1.5, 1)}),
            "not to be judged (serial: wall 7ms, under 0.1 s; streams: a busy machine: other "
            "processes kept 1.2 of "
            "its 2 cores busy): streams finished 2.00x sooner than serial; each model trained "
            "3.00x slower than alone");
}

}  // namespace
}  // namespace mf
