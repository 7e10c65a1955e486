// The documents of real runs of a tiny sweep (serial, and packed with a scheduler and the step
// timeline measured) read back from their one JSON form (from_json, study/report/run_json.cpp) and
// written again are the same JSON, compared field by field. A run with every field set by hand, and
// a default one, the same way: test_report_forms.cpp.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "study/job.h"
#include "study/modes/mode.h"
#include "study/report/report.h"
#include "study/runner.h"
#include "same_fields.h"

namespace mf {
namespace {

using nlohmann::json;

// ---- Real runs ----------------------------------------------------------------------------------

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
