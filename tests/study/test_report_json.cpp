// A run's report read back from its one JSON form (from_json, study/report/run_json.cpp) and
// written again is the same JSON, compared field by field: a run with every field set here (none a
// default, so that a field that is not read back shows as its default), a default run, and the
// documents of real runs of a tiny sweep (serial, and packed with a scheduler and the step timeline
// measured). What is derived (unjudged, the overlap's fraction, the scheduler's compute_fraction)
// comes back from what it is of. A model's own form both ways, against literal JSON:
// test_report_forms.cpp.
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "study/job.h"
#include "study/modes/mode.h"
#include "study/report/report.h"
#include "study/runner.h"

namespace mf {
namespace {

using nlohmann::json;

// A field added to a run's report stops this compiling (a structured binding names every field):
// give it a value in full_run() that is not its default.
[[maybe_unused]] void field_count_guards(RunReport& r, MachineRecord& mr, SchedulerReport& s,
                                         RungSummary& rs) {
  [[maybe_unused]] auto& [r_backend, r_device_name, r_mode, r_data, r_device_schedule, r_data_bytes,
                          r_host_peak_rss_bytes, r_workers_peak_rss_bytes, r_wall_s, r_scheduler,
                          r_startup_s, r_train_s, r_samples_per_s, r_process_startup_s,
                          r_speedup_vs_serial, r_serial_wall_s, r_repeat, r_concurrency,
                          r_concurrency_reason, r_training_threads, r_pools_kept, r_injected_fault,
                          r_resumed_models, r_overlap, r_overlap_kind, r_mps, r_gpu, r_gpu_note,
                          r_error, r_auto_choice, r_rank_by, r_ranking, r_ranks, r_sweep, r_shard,
                          r_shards, r_machine, r_models] = r;
  [[maybe_unused]] auto& [mr_multifit, mr_cores, mr_hardware_threads, mr_memory_total_bytes,
                          mr_load_average_before, mr_load_average_after, mr_others_busy_cores,
                          mr_cpu_pressure, mr_busy] = mr;
  [[maybe_unused]] auto& [s_spec, s_rungs, s_samples, s_full_samples] = s;
  [[maybe_unused]] auto& [rs_bracket, rs_epochs, rs_trials, rs_kept, rs_best, rs_median, rs_worst] =
      rs;
}

// Every field of `want` in `got` and no other, compared one at a time by its path
// ("models[0].memory.plan[1].bytes"), each value by its text, so that 3 and 3.0 differ.
void expect_same_fields(const json& got, const json& want, const std::string& at = "the document") {
  if (got.is_object() && want.is_object()) {
    for (const auto& [key, value] : want.items()) {
      if (!got.contains(key))
        ADD_FAILURE() << at << "." << key << " is not read back";
      else
        expect_same_fields(got[key], value, at + "." + key);
    }
    for (const auto& [key, value] : got.items())
      if (!want.contains(key))
        ADD_FAILURE() << at << "." << key << " is written back but was not there";
  } else if (got.is_array() && want.is_array() && got.size() == want.size()) {
    for (size_t i = 0; i < want.size(); ++i)
      expect_same_fields(got[i], want[i], at + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(got.dump(), want.dump()) << at;
  }
}

// `document` read back as a run and written again.
json written_again(const json& document) { return json(document.get<RunReport>()); }

// A model with every field of the document set (its own form, timeline too: test_report_forms.cpp).
ModelReport some_model() {
  ModelReport m;
  m.index = 4;
  m.name = "tiny-lr0.01";
  m.values = {{"learning_rate", 0.01}};
  m.status = ModelStatus::stopped;
  m.error = "stopped at rung 1";
  m.fit.status = FitStatus::stopped;
  m.fit.why = "stopped by the scheduler";
  m.fit.epochs = {{0.5, 0.75, 0.625, 0.875, 1.5, 100, 0.0625, 0.4375, {0.75}, {0.875}, 0.5}};
  m.fit.rungs = {{1, 0.875, false}};
  m.fit.train_s = 1.5;
  m.metrics = {{"accuracy", Metric::binary_accuracy}};
  m.startup_s = 0.25;
  m.samples_per_s = 100;
  m.samples = m.fit.samples = 150;
  m.train_rows = 150;
  m.solo_s = 1.25;
  m.slowdown = 1.2;
  m.test = {0.5, 0.75, {0.75}};
  m.has_accuracy = m.validated = m.tested = m.fitted = true;
  m.settings = TrainingSettings{};
  m.settings->hidden = {8};
  m.plan = {{"parameters", 512}};
  m.params = 177;
  m.memory = {4096, 2048, 1024, 1536};
  m.process_device_bytes = 8192;
  m.process_peak_rss_bytes = 16384;
  m.in_use_before_release_bytes = 300;
  m.in_use_after_release_bytes = 200;
  m.backend = "cpu";
  m.device_name = "a CPU";
  m.device_schedule = "spin";
  m.data = "synthetic:teacher:rows=64";
  m.data_bytes = 5120;
  m.host = "node-1";
  m.pid = 7;
  m.mpi_rank = 1;
  m.device = 1;
  m.visible_devices = "1";
  m.pack = 0;
  m.pack_members = 2;
  return m;
}

// A run with every field set, none to its default.
RunReport full_run() {
  RunReport r;
  r.backend = "cpu";
  r.device_name = "a CPU; another CPU";
  r.device_schedule = "spin";
  r.mode = "packed";
  r.data = "synthetic:teacher:rows=64";
  r.data_bytes = 5120;
  r.host_peak_rss_bytes = 1048576;
  r.workers_peak_rss_bytes = 2097152;
  r.wall_s = 3.5;
  SchedulerSpec spec;
  spec.type = SchedulerKind::asha;
  spec.metric = "val_accuracy";
  spec.maximize = true;
  spec.grace_epochs = 1;
  spec.reduction_factor = 3;
  spec.max_epochs = 9;
  r.scheduler = SchedulerReport{
      spec, {{0, 1, 3, 1, 0.875, 0.75, NAN}, {0, 3, 1, 1, 0.9375, 0.9375, 0.9375}}, 640, 2560};
  r.startup_s = 0.25;
  r.train_s = 3.0;
  r.samples_per_s = 213.5;
  r.process_startup_s = 0.0625;
  r.speedup_vs_serial = 1.75;
  r.serial_wall_s = 6.125;
  r.repeat = 2;
  r.concurrency = 4;
  r.concurrency_reason = "--concurrency 4, as asked";
  r.training_threads = 5;
  r.pools_kept = true;
  r.injected_fault = "tiny-lr0.01";
  r.resumed_models = 3;
  r.overlap = Overlap{4.0, 1.0};
  r.overlap_kind = "interleaved";
  r.mps = false;
  r.gpu = {{"device", "NVIDIA H200"}, {"samples", 7}, {"peak_used_bytes", 65536}};
  r.gpu_note = "GPU is lost";
  r.error = "the sweep had a bad entry";
  r.auto_choice = {{"mode", "packed"}};
  r.rank_by = "val_accuracy";
  r.ranking = {"tiny-lr0.01"};
  r.ranks = {{0, "node-1", 3.5, 0.25, 128.25, 1},
             {1, "node-2", std::nullopt, std::nullopt, std::nullopt, 0}};
  r.sweep = SweepIdentity{"tiny-sweep", 12, "0123456789abcdef"};
  r.shard = Shard{1, 3};
  r.shards = {{1, "node-1", 1.75, 0.125, 64.5, 4}};
  r.machine = MachineRecord{
      "multifit 0.16.0 (commit 0123456789ab)",       2, 4, 25769803776, 3.5, 1.25, 0.75, 0.5,
      "other processes kept 0.8 of its 2 cores busy"};
  r.models = {some_model()};
  return r;
}

TEST(RunReportJson, EveryFieldReadBackIsWrittenAgainAsItWas) {
  const json document = full_run();
  expect_same_fields(written_again(document), document);
  // And the fields themselves, where a value's form could hide a difference.
  const RunReport back = document.get<RunReport>();
  EXPECT_EQ(back.overlap_kind, "interleaved");
  ASSERT_TRUE(back.scheduler);
  EXPECT_TRUE(std::isnan(back.scheduler->rungs[0].worst));
  EXPECT_EQ(back.machine->cpu_pressure, 0.5);
  EXPECT_EQ(back.models[0].device_schedule, "spin");
  EXPECT_TRUE(back.models[0].fit.steps.empty()) << "the document has no timeline";
}

TEST(RunReportJson, ADefaultRunReadBackIsWrittenAgainAsItWas) {
  const json document = RunReport{};
  expect_same_fields(written_again(document), document);
}

// A field that reads back wrong must fail the comparison, and name the field.
TEST(RunReportJson, TheComparisonNamesAFieldThatDiffers) {
  json changed = full_run();
  changed["ranks"][1]["host"] = "node-3";
  EXPECT_NONFATAL_FAILURE(expect_same_fields(written_again(changed), json(full_run())),
                          "the document.ranks[1].host");
}

// A field missing from a document is said by its name; one added to the form later reads as its
// default.
TEST(RunReportJson, AMissingFieldIsNamedAndALaterOneReadsAsItsDefault) {
  json document = full_run();
  document.erase("wall_s");
  try {
    (void)document.get<RunReport>();
    ADD_FAILURE() << "read without its wall_s";
  } catch (const json::exception& e) {
    EXPECT_NE(std::string(e.what()).find("'wall_s'"), std::string::npos) << e.what();
  }
  document = full_run();
  document.erase("machine");
  EXPECT_FALSE(document.get<RunReport>().machine);
}

// ---- Real runs
// -------------------------------------------------------------------------------------

// A tiny sweep of 4 models of 64 rows, written to a file of its own; with a scheduler when asked.
class RealRuns : public testing::Test {
 protected:
  void SetUp() override {
    const testing::TestInfo& t = *testing::UnitTest::GetInstance()->current_test_info();
    path_ = (std::filesystem::temp_directory_path() /
             ("mf_" + std::to_string(getpid()) + "_" + t.name() + ".json"))
                .string();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // The document of a run of the sweep in `mode`, every model's step timeline measured.
  json run(ModeKind mode, bool with_scheduler) const {
    json sweep = {
        {"name", "tiny"},
        {"base",
         {{"name", "tiny"},
          {"data", "synthetic:teacher:rows=64"},
          {"input", 20},
          {"layers",
           {{{"units", 8}, {"activation", "relu"}}, {{"units", 1}, {"activation", "sigmoid"}}}},
          {"loss", "binary_crossentropy"},
          {"fit", {{"epochs", 3}, {"batch_size", 16}, {"validation_split", 0.25}}}}},
        {"grid", {{"learning_rate", {0.001, 0.01}}, {"seed", {1, 2}}}}};
    if (with_scheduler)
      sweep["scheduler"] = {{"type", "asha"}, {"metric", "val_accuracy"}, {"grace_epochs", 1}};
    std::ofstream(path_) << sweep.dump();
    const Sweep loaded = load_sweep(path_);
    RunOptions options;
    options.backend.kind = BackendKind::cpu;
    options.quiet = true;
    options.timeline = true;
    std::vector<Job> jobs = make_jobs(loaded, options);
    if (loaded.scheduler) options.scheduler = scheduler_for(*loaded.scheduler, jobs);
    const std::atomic<bool> stop = false;
    int code = 0;
    const RunReport report = run_mode(*make_mode(mode, options), jobs, options, stop, &code);
    EXPECT_EQ(code, 0);
    for (const ModelReport& m : report.models) EXPECT_TRUE(m.fitted) << m.name << ": " << m.error;
    return report;
  }

 private:
  std::string path_;
};

TEST_F(RealRuns, ASerialRunsDocumentReadBackIsWrittenAgainAsItWas) {
  const json document = run(ModeKind::serial, false);
  ASSERT_EQ(document["models"].size(), 4u);
  EXPECT_TRUE(document["machine"].is_object());
  expect_same_fields(written_again(document), document);
}

TEST_F(RealRuns, APackedRunsWithItsSchedulerAndOverlapReadBackIsWrittenAgainAsItWas) {
  const json document = run(ModeKind::packed, true);
  ASSERT_EQ(document["models"].size(), 4u);
  EXPECT_TRUE(document["scheduler"].is_object());
  EXPECT_TRUE(document["overlap"].is_object());
  expect_same_fields(written_again(document), document);
}

}  // namespace
}  // namespace mf
