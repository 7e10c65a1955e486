// The run's checks of its flags against the sweep (apps/multifit/run_checks.h): a --save-best DIR
// that is a file or whose folder is missing, a --rank-by metric no model of the sweep can have, and
// an --inject-fault naming no model are refused.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "runtime/error.h"
#include "apps/multifit/run_checks.h"

namespace mf {
namespace {

namespace fs = std::filesystem;

// The message of the UserError `check` throws; "" when it throws none.
template <typename Check>
std::string refusal(Check check) {
  try {
    check();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(RunChecks, ADirThatIsAFileOrInAMissingFolderIsRefused) {
  const fs::path base = fs::temp_directory_path() / ("mf_best_checks_" + std::to_string(getpid()));
  fs::create_directories(base);
  std::ofstream(base / "file") << "not a folder";
  EXPECT_EQ(refusal([&] { check_save_best_dir({2, (base / "new").string()}); }), "");
  EXPECT_EQ(refusal([&] { check_save_best_dir({2, base.string()}); }), "");
  const std::string file = (base / "file").string();
  const std::string a_file = refusal([&] { check_save_best_dir({2, file}); });
  EXPECT_EQ(a_file, "--save-best 2 " + file +
                        ": is a file, not a folder; give a folder for the best models' files (it "
                        "is made when it does not exist)");
  const std::string missing = (base / "missing" / "best").string();
  const std::string in_a_missing = refusal([&] { check_save_best_dir({2, missing}); });
  EXPECT_EQ(in_a_missing, "--save-best 2 " + missing + ": the folder " +
                              (base / "missing").string() + " does not exist, so " + missing +
                              " cannot be made in it");
  fs::remove_all(base);
}

TEST(RunChecks, AMetricNoModelCanHaveIsRefused) {
  Job unvalidated;
  unvalidated.data = "synthetic:teacher:rows=64";
  ModelSpec spec;
  spec.loss = Loss::binary_crossentropy;
  unvalidated.spec = spec;
  const std::vector<Job> jobs = {unvalidated};
  EXPECT_EQ(refusal([&] { check_save_best_metric(jobs, std::nullopt); }), "");
  EXPECT_EQ(refusal([&] { check_save_best_metric(jobs, RankBy::test_loss); }), "");
  EXPECT_EQ(refusal([&] { check_save_best_metric(jobs, RankBy::val_loss); }),
            "--save-best with --rank-by val_loss: no model of the sweep can have val_loss, "
            "which needs validation rows (fit.validation_split above 0); rank by another "
            "metric, or leave --rank-by out");
  Job unread;  // a bad entry of the sweep: no spec, no value of anything
  EXPECT_NE(refusal([&] { check_save_best_metric({unread}, RankBy::train_s); }), "");
}

TEST(RunChecks, AFaultForNoModelOfTheSweepNamesTheFirstFive) {
  std::vector<Job> jobs;
  for (const char* name : {"m0", "m1", "m2", "m3", "m4", "m5", "m6"})
    jobs.emplace_back().name = name;
  EXPECT_EQ(refusal([&] { check_fault_target(jobs, "m6", "s.json"); }), "");
  EXPECT_EQ(refusal([&] { check_fault_target(jobs, "m7", "s.json"); }),
            "--inject-fault m7: s.json has no model of that name; its models are m0, m1, m2, m3, "
            "m4 and 2 more");
  jobs.resize(2);
  EXPECT_EQ(refusal([&] { check_fault_target(jobs, "x", "s.json"); }),
            "--inject-fault x: s.json has no model of that name; its models are m0, m1");
  EXPECT_EQ(refusal([&] { check_fault_target({}, "x", "s.json"); }),
            "--inject-fault x: s.json has no model of that name; it has no models");
}

}  // namespace
}  // namespace mf
