// What a busy machine cost a run (study/report/busy_cost.h), from made-up runs: the median
// samples/s of its mode's quiet repeats, else --mode auto's calibration where that can be judged,
// else nothing; in the run's `unjudged` words.
#include <gtest/gtest.h>

#include "study/report/answer.h"
#include "study/report/busy_cost.h"

namespace mf {
namespace {

// A run of `mode` (repeat `repeat`), 1 s long at `samples_per_s`, busy where `busy` says why.
RunReport run_of(const std::string& mode, int repeat, double samples_per_s,
                 const std::string& busy = "") {
  RunReport run;
  run.mode = mode;
  run.repeat = repeat;
  run.wall_s = 1;
  run.samples_per_s = samples_per_s;
  run.machine.emplace();
  run.machine->busy = busy;
  return run;
}

const std::string kBusy = "other processes kept 1.9 of its 2 cores busy";

TEST(BusyCost, AgainstTheMedianOfTheModesQuietRepeats) {
  std::vector<RunReport> runs = {run_of("packed", 1, 400), run_of("serial", 1, 900),
                                 run_of("packed", 2, 100, kBusy), run_of("packed", 3, 200),
                                 run_of("packed", 4, 300, kBusy)};
  runs[0].wall_s = 0.05;                     // too short to judge: no reference
  runs[4].machine->quiet_samples_per_s = 1;  // an earlier note, made again
  note_busy_costs(runs);
  EXPECT_EQ(runs[2].machine->quiet_samples_per_s, 200) << "serial's and the short run's are not";
  EXPECT_EQ(runs[2].machine->quiet_from, "run 3");
  EXPECT_EQ(runs[4].machine->quiet_samples_per_s, 200);
  EXPECT_FALSE(runs[3].machine->quiet_samples_per_s) << "a quiet run costs nothing";
  EXPECT_EQ(why_unjudged(runs[2]),
            "a busy machine: " + kBusy +
                "; it trained at 0.50x the samples/s of its mode quiet (100 against 200, run 3)");

  runs.push_back(run_of("packed", 5, 600));
  note_busy_costs(runs);
  EXPECT_EQ(runs[2].machine->quiet_samples_per_s, 400) << "the median of 200 and 600";
  EXPECT_EQ(runs[2].machine->quiet_from, "runs 3 and 5");
}

TEST(BusyCost, ElseAgainstTheCalibrationWhereItCanBeJudged) {
  std::vector<RunReport> runs = {run_of("streams", 1, 300, kBusy)};
  runs[0].auto_choice = {{"mode", "streams"},
                         {"calibration",
                          {{{"mode", "streams"}, {"samples_per_s", 600.0}, {"unjudged", nullptr}},
                           {{"mode", "serial"}, {"samples_per_s", 900.0}, {"unjudged", nullptr}}}}};
  note_busy_costs(runs);
  EXPECT_EQ(why_unjudged(runs[0]),
            "a busy machine: " + kBusy +
                "; it trained at 0.50x the samples/s of its mode quiet (300 against 600, the "
                "calibration)");

  runs[0].auto_choice["calibration"][0]["unjudged"] = "a busy machine: " + kBusy;
  note_busy_costs(runs);
  EXPECT_FALSE(runs[0].machine->quiet_samples_per_s) << "a busy calibration is no reference";
  EXPECT_EQ(why_unjudged(runs[0]), "a busy machine: " + kBusy);

  runs[0].auto_choice["calibration"][0].erase("unjudged");
  note_busy_costs(runs);
  EXPECT_FALSE(runs[0].machine->quiet_samples_per_s)
      << "a journal's choice from before calibrations were judged has no verdict";
}

}  // namespace
}  // namespace mf
