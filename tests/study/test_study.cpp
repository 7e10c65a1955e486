// The pieces of `multifit run` below the command line: jobs from a sweep, packing, the ranking of
// exit codes, and progress lines. The options and the job a child is sent, and the report's forms:
// test_report_forms.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "study/job.h"
#include "study/model_worker.h"
#include "study/modes/mode.h"
#include "study/progress.h"
#include "study/report/report.h"
#include "study/runner.h"

namespace mf {
namespace {

Sweep three_models() {
  Sweep sweep;
  for (const char* name : {"a", "b", "c"}) {
    ModelSpec spec;
    spec.name = name;
    spec.input = 4;
    spec.layers = {{1, Activation::linear}};
    sweep.models.push_back({name, spec, ""});
  }
  sweep.models[1].spec.reset();
  sweep.models[1].error = "sweep.json models[1]: layers: bad";
  return sweep;
}

TEST(Jobs, DevicesGoRoundRobinAndOverridesApplyToEveryModel) {
  RunOptions options;
  options.devices = {3, 5};
  options.data = "synthetic:regression";
  options.overrides.epochs = 7;
  options.overrides.memory_mode = PoolMode::reserve;
  const std::vector<Job> jobs = make_jobs(three_models(), options);
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].device, 3);
  EXPECT_EQ(jobs[1].device, 5);
  EXPECT_EQ(jobs[2].device, 3);
  EXPECT_EQ(jobs[0].spec->fit.epochs, 7);
  EXPECT_EQ(jobs[2].spec->memory.mode, PoolMode::reserve);
  EXPECT_EQ(jobs[2].data, "synthetic:regression");
  EXPECT_FALSE(jobs[1].spec.has_value());  // a bad entry stays bad, with its message
  EXPECT_EQ(jobs[1].error, "sweep.json models[1]: layers: bad");
  EXPECT_EQ(jobs[2].index, 2u);
}

TEST(Jobs, WithoutDevicesEveryModelIsOnDeviceZero) {
  const std::vector<Job> jobs = make_jobs(three_models(), RunOptions{});
  for (const Job& job : jobs) EXPECT_EQ(job.device, 0);
  EXPECT_EQ(jobs[0].data, "fashion-mnist");  // the spec's own
}

// The options and the job a child is sent, field by field: test_report_forms.cpp (ChildOptions,
// ChildJob).

// Jobs of two shapes, a second data source and a second device, around a bad entry.
std::vector<Job> jobs_to_pack() {
  std::vector<Job> jobs(8);
  for (size_t i = 0; i < jobs.size(); ++i) {
    ModelSpec spec;
    spec.name = "model-" + std::to_string(i);
    spec.input = 4;
    // odd and even: two shapes
    spec.layers = {{i % 2 ? 8 : 16, Activation::relu}, {1, Activation::linear}};
    spec.seed = i;
    spec.optimizer.learning_rate = 1e-3f * float(i + 1);  // members may differ in these
    jobs[i].index = i;
    jobs[i].name = spec.name;
    jobs[i].spec = spec;
    jobs[i].data = "synthetic:regression";
  }
  jobs[3].spec.reset();                          // a bad entry
  jobs[6].data = "synthetic:regression:seed=2";  // another data set
  jobs[7].device = 1;                            // another GPU
  return jobs;
}

TEST(PackedMode, PacksModelsOfOneShapeDataAndDevice) {
  const std::vector<Job> jobs = jobs_to_pack();
  const GroupPlan plan = plan_packs(jobs, 0);
  EXPECT_EQ(plan.groups, (std::vector<std::vector<size_t>>{{0, 2, 4}, {1, 5}, {3}, {6}, {7}}));
  // why each pack is not part of an earlier one: its first model against the last pack opened
  // on its data and device, else on its data, else any
  EXPECT_EQ(plan.boundaries,
            (std::vector<std::string>{
                "", "layers[0].units 8, not 16 (pack 0)", "its entry failed",
                "data synthetic:regression:seed=2, not synthetic:regression (pack 1)",
                "device 1, not 0 (pack 1)"}));
  const GroupPlan bounded = plan_packs(jobs, 2);
  EXPECT_EQ(bounded.groups, (std::vector<std::vector<size_t>>{{0, 2}, {1, 5}, {3}, {4}, {6}, {7}}));
  EXPECT_EQ(bounded.boundaries[3], "pack 0 is full (2 members)");
  EXPECT_EQ(bounded.boundaries[5], "device 1, not 0 (pack 3)");
  EXPECT_EQ(plan_packs(jobs, 1).groups.size(), jobs.size());  // --pack-size 1: every model alone
}

// A model's report through its one form, the document, the pipe and the CSV, field by field:
// test_report_forms.cpp.

// A model that trained `train_s`, in pack `pack` when given.
ModelReport trained(double train_s, std::optional<int> pack = std::nullopt) {
  ModelReport m;
  m.fitted = true;
  m.fit.train_s = train_s;
  m.pack = pack;
  return m;
}

// A model's slowdown is its time against its solo run's; a pack's, the pack's time against the sum
// of its members' solo times (the "speedup 1.89x, mean slowdown 33.9x" came from charging
// every member the whole pack's time).
TEST(Slowdown, APacksIsItsTimeAgainstTheSumOfItsMembersSoloTimes) {
  RunReport serial;
  for (double s : {1.0, 2.0, 3.0, 4.0, 5.0}) serial.models.push_back(trained(s));
  RunReport run;
  run.wall_s = 1;
  run.models = {trained(3.0, 0), trained(2.5, 0), trained(3.0, 0), trained(2.0, 1), trained(10.0)};
  compare_with_serial(run, serial);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(run.models[size_t(i)].solo_s, double(i + 1)) << i;
    EXPECT_DOUBLE_EQ(*run.models[size_t(i)].slowdown, 3.0 / (1 + 2 + 3))
        << "pack 0: 3 s for 6 s of solo time";
  }
  EXPECT_DOUBLE_EQ(*run.models[3].slowdown, 2.0 / 4) << "a pack of one";
  EXPECT_DOUBLE_EQ(*run.models[4].slowdown, 10.0 / 5) << "a model alone";
  // A member without a solo time leaves its pack without a slowdown, but keeps the others' solo_s.
  serial.models[1].fitted = false;
  RunReport partial;
  partial.models = {trained(3.0, 0), trained(2.5, 0)};
  compare_with_serial(partial, serial);
  EXPECT_FALSE(partial.models[0].slowdown);
  EXPECT_FALSE(partial.models[1].slowdown);
  EXPECT_EQ(partial.models[0].solo_s, 1.0);
}

TEST(ExitCodes, CtrlCOverAMistakeOverAFailure) {
  EXPECT_EQ(worse_exit_code(0, 1), 1);
  EXPECT_EQ(worse_exit_code(2, 1), 2);
  EXPECT_EQ(worse_exit_code(1, 2), 2);
  EXPECT_EQ(worse_exit_code(130, 2), 130);
  EXPECT_EQ(worse_exit_code(0, 0), 0);
}

TEST(Progress, PlainLinesNameTheModelWhenThereAreSeveral) {
  testing::internal::CaptureStderr();
  {
    Progress several({"a", "b"}, false);  // stderr is no terminal here: plain lines
    several.epoch(1, "Epoch 1/2");
    several.note("released a");
    Progress one({"solo"}, false);
    one.epoch(0, "Epoch 1/1");
    one.note("not shown for one model");
    Progress quiet({"a", "b"}, true);
    quiet.epoch(0, "not shown");
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "b: Epoch 1/2\nreleased a\nEpoch 1/1\n");
}

// A report of a model that ended `status` with a last val_accuracy of `val_accuracy`.
ModelReport ended_with(ModelStatus status, double val_accuracy) {
  ModelReport r;
  r.status = status;
  r.fitted = r.validated = r.has_accuracy = true;
  EpochMetrics epoch;
  epoch.val_accuracy = val_accuracy;
  r.fit.epochs.push_back(epoch);
  return r;
}

// More models than kPlainLinesModels on a file or pipe: no epoch lines, no per-model notes, one
// status line when the last ends (the run is shorter than kStatusEvery_s), with the counts by
// status and the best by the first model's metric; an interrupted model counts as interrupted, not
// by its report.
TEST(Progress, ARunOfManyModelsIsOneStatusLine) {
  std::vector<std::string> names;
  for (int i = 0; i < int(kPlainLinesModels) + 2; ++i) names.push_back("m" + std::to_string(i));
  testing::internal::CaptureStderr();
  {
    Progress progress(names, false);
    progress.epoch(0, "Epoch 1/2 - not shown");
    progress.model_note("multifit: serial: released m0 (not shown)");
    progress.note("multifit: packed: a phase's note (shown)");
    for (size_t i = 0; i < names.size();
         ++i) {  // m9, interrupted, would rank above m6 by its report
      const ModelStatus status = i % 3 == 1 ? ModelStatus::stopped : ModelStatus::ok;
      progress.ended(i,
                     ended_with(status, i == 6   ? 0.9
                                        : i == 9 ? 0.95
                                                 : 0.5 + 0.01 * double(i)),
                     i == 9 ? 130 : 0);
    }
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(
      err.starts_with("multifit: packed: a phase's note (shown)\n"
                      "multifit: 10/10 models ended (1 interrupted, 6 ok, 3 stopped) in "))
      << err;
  EXPECT_TRUE(err.ends_with("; best val_accuracy 0.9000 (m6)\n")) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 2) << err;
}

// A status sink (the Python package's bar) takes the status as models end, in place of every line
// the run would print of its models: at most 10 times a second (here the first, then the last,
// which is always said); its notes are still said.
TEST(Progress, AStatusSinkTakesTheStatusInPlaceOfTheLines) {
  const std::vector<std::string> names = {"m0", "m1", "m2"};
  std::vector<std::string> said;
  ProgressStyle style;
  style.status = [&](size_t ended, size_t models, const std::string& statuses,
                     const std::string& best) {
    said.push_back(std::to_string(ended) + "/" + std::to_string(models) + " " + statuses + " | " +
                   best);
  };
  testing::internal::CaptureStderr();
  {
    Progress progress(names, false, 0, {}, {}, style);
    progress.epoch(0, "Epoch 1/2 - not shown");
    progress.note("multifit: packed: a note (shown)");
    progress.ended(1, ended_with(ModelStatus::ok, 0.75), 0);
    progress.ended(0, ended_with(ModelStatus::stopped, 0.5), 0);
    progress.ended(2, ended_with(ModelStatus::ok, 0.875), 0);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "multifit: packed: a note (shown)\n");
  // the second is said only where 0.1 s passed since the first (a stalled machine)
  const std::vector<std::string> all = {"1/3 1 ok | best val_accuracy 0.7500 (m1)",
                                        "2/3 1 ok, 1 stopped | best val_accuracy 0.7500 (m1)",
                                        "3/3 2 ok, 1 stopped | best val_accuracy 0.8750 (m2)"};
  EXPECT_TRUE((said == all || said == std::vector<std::string>{all[0], all[2]})) << said.size();
}

// --verbose keeps every model's lines, however many; --rank-by names the status line's metric.
TEST(Progress, VerboseShowsEveryModelsLines) {
  std::vector<std::string> names;
  for (int i = 0; i < int(kPlainLinesModels) + 2; ++i) names.push_back("m" + std::to_string(i));
  testing::internal::CaptureStderr();
  {
    Progress progress(names, false, 0, {}, {}, {true, RankBy::val_loss, {}});
    progress.epoch(3, "Epoch 1/2 - loss: 0.5");
    progress.model_note("multifit: serial: released m3");
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "m3: Epoch 1/2 - loss: 0.5\nmultifit: serial: released m3\n");
}

// The "still running" line, with its times made small: said once no more than `most` models of the
// phase are left and the last of the others ended `after_s` ago, naming them with their last epoch
// and step; not again within `every_s`.
TEST(Progress, SaysWhichModelsAreStillRunningLongAfterTheOthers) {
  const StillRunning soon{1, 0.2, 30, 4};
  const ModelReport report;
  testing::internal::CaptureStderr();
  {
    Progress progress({"a", "b", "c"}, false, 3, soon);
    progress.epoch(2, "Epoch 3/10 - 5 steps - 1ms - loss: 0.5");
    progress.step(2);
    progress.ended(0, report, 0);
    progress.ended(1, report, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "c: Epoch 3/10 - 5 steps - 1ms - loss: 0.5\n"
            "multifit: still running: c (Epoch 3/10 done, 0 s since its last step)\n");
}

// Nothing while more models than that are left, nor for a phase none of whose models has ended;
// phases are the runner's, in order.
TEST(Progress, SaysNothingWhileMoreAreRunningOrNoneHasEnded) {
  const StillRunning soon{1, 0.1, 30, 4};
  const ModelReport report;
  testing::internal::CaptureStderr();
  {
    Progress two_left({"a", "b", "c"}, false, 3, soon);
    two_left.ended(0, report, 0);
    Progress next_phase({"a", "b", "c", "d"}, false, 2, soon);  // phases {a, b}, {c, d}
    next_phase.ended(0, report, 0);
    next_phase.ended(1, report, 0);
    Progress quiet({"a", "b"}, true, 2, soon);
    quiet.ended(0, report, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  testing::internal::CaptureStderr();
  {
    Progress many({"a", "b", "c", "d", "e", "f", "g"}, false, 7, {6, 0.1, 30, 2});
    many.ended(0, report, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "multifit: still running: b (no epoch done), c (no epoch done) and 4 others\n");
}

}  // namespace
}  // namespace mf
