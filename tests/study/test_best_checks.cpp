// --save-best's checks before anything trains (study/best/checks.h): a DIR that is a file or whose
// folder is missing, and a --rank-by metric no model of the sweep can have, are refused.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "runtime/error.h"
#include "study/best/checks.h"

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

TEST(BestChecks, ADirThatIsAFileOrInAMissingFolderIsRefused) {
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

TEST(BestChecks, AMetricNoModelCanHaveIsRefused) {
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

}  // namespace
}  // namespace mf
