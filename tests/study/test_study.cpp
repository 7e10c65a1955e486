// The pieces of `multifit run` below the command line: jobs from a sweep, the options a worker is
// sent, the wire form of a model's report, the ranking of exit codes, and progress lines.
#include <cmath>

#include <gtest/gtest.h>

#include "study/job.h"
#include "study/model_worker.h"
#include "study/modes/mode.h"
#include "study/progress.h"
#include "study/report/report.h"

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

TEST(Jobs, OptionsSurviveTheTripToAWorker) {
  RunOptions options;
  options.models_path = "/x/sweep.json";
  options.backend = {BackendKind::host_exec, GemmImpl::tiled, ActivationImpl::ours, GraphsChoice::off};
  options.overrides.learning_rate = 0.25f;
  options.overrides.seed = 18446744073709551615u;
  options.overrides.memory_limit = size_t(3) << 30;
  options.devices = {1, 2};
  options.quiet = true;
  const RunOptions back = run_options_from_json(nlohmann::json::parse(to_json(options).dump()));
  EXPECT_EQ(to_json(back), to_json(options));
  EXPECT_EQ(*back.overrides.seed, 18446744073709551615u);
  EXPECT_FALSE(back.overrides.epochs.has_value());
}

// Jobs of two shapes, a second data source and a second device, around a bad entry.
std::vector<Job> jobs_to_pack() {
  std::vector<Job> jobs(8);
  for (size_t i = 0; i < jobs.size(); ++i) {
    ModelSpec spec;
    spec.name = "model-" + std::to_string(i);
    spec.input = 4;
    spec.layers = {{i % 2 ? 8 : 16, Activation::relu}, {1, Activation::linear}};  // odd and even: two shapes
    spec.seed = i;
    spec.optimizer.learning_rate = 1e-3f * float(i + 1);  // members may differ in these
    jobs[i].index = i;
    jobs[i].name = spec.name;
    jobs[i].spec = spec;
    jobs[i].data = "synthetic:regression";
  }
  jobs[3].spec.reset();                       // a bad entry
  jobs[6].data = "synthetic:regression:seed=2";  // another data set
  jobs[7].device = 1;                         // another GPU
  return jobs;
}

TEST(PackedMode, PacksModelsOfOneShapeDataAndDevice) {
  const std::vector<Job> jobs = jobs_to_pack();
  EXPECT_EQ(plan_packs(jobs, 0), (std::vector<std::vector<size_t>>{{0, 2, 4}, {1, 5}, {3}, {6}, {7}}));
  EXPECT_EQ(plan_packs(jobs, 2), (std::vector<std::vector<size_t>>{{0, 2}, {1, 5}, {3}, {4}, {6}, {7}}));
  EXPECT_EQ(plan_packs(jobs, 1).size(), jobs.size());  // --pack-size 1: every model alone
}

TEST(Report, TheWireFormKeepsEveryField) {
  ModelReport m;
  m.name = "m";
  m.status = ModelStatus::diverged;
  m.error = "epoch 2: the training loss is nan";
  m.has_accuracy = m.fitted = m.tested = true;
  m.fit.status = FitStatus::diverged;
  m.fit.why = "epoch 2: the training loss is nan";
  m.fit.epochs = {{0.5, 0.75, NAN, NAN, 1.5, 100}, {NAN, 0.5, NAN, NAN, 1.25, 120}};
  m.fit.train_s = 2.75;
  m.fit.steps = {{10.0, 10.5}, {10.5, 11.25}};
  m.fit.epoch_spans = {{10.0, 11.25}};
  m.startup_s = 0.125;
  m.samples = 640;
  m.samples_per_s = 232.5;
  m.test = {INFINITY, 0.5};
  m.settings = TrainingSettings{};
  m.settings->seed = 3;
  m.plan = {{"parameters", 512}, {"gradients", 512}};
  m.params = 100;
  m.memory = {4096, 2048, 1024, 1536};
  m.backend = "cpu";
  m.device_name = "a CPU";
  m.data = "synthetic";
  m.data_bytes = 800;
  m.pid = 42;
  m.device = 3;
  m.visible_devices = "3";
  const ModelReport back = nlohmann::json::parse(nlohmann::json(m).dump()).get<ModelReport>();
  EXPECT_EQ(nlohmann::json(back), nlohmann::json(m));  // NaN and inf come back as they went
  EXPECT_TRUE(std::isnan(back.fit.epochs[1].loss));
  EXPECT_TRUE(std::isinf(back.test.loss));
  EXPECT_EQ(back.fit.steps.size(), 2u);
  EXPECT_EQ(back.fit.steps[1].end_s, 11.25);
  EXPECT_EQ(back.memory.peak_bytes, 1536u);
  EXPECT_EQ(back.status, ModelStatus::diverged);
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

}  // namespace
}  // namespace mf
