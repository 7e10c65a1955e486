#pragma once
// What the --save-best tests (test_best_*.cpp) share: reports of models that ended ok with the
// metrics given, and a fresh DIR per test with a keeper's ways of ending models in it.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "study/best/staging.h"
#include "study/report/report.h"

namespace mf::best_test {

namespace fs = std::filesystem;

// Model i's name: m0, m1... (appended, not "m" + to_string(i), which GCC 12 warns of wrongly,
// -Wrestrict).
inline std::string name_of(size_t i) {
  std::string name = "m";
  return name += std::to_string(i);
}

// A model that ended ok with these metrics (test loss 0.6, val loss 0.7); absent ones it does not
// have (no validation rows, no test set).
inline ModelReport model(size_t index, std::optional<double> val_accuracy,
                         std::optional<double> test_accuracy = 0.5, double train_s = 1.0) {
  ModelReport m;
  m.index = index;
  m.name = name_of(index);
  m.fitted = true;
  m.has_accuracy = true;
  m.validated = val_accuracy.has_value();
  m.tested = test_accuracy.has_value();
  m.fit.train_s = train_s;
  EpochMetrics epoch;
  epoch.loss = 0.5, epoch.accuracy = 0.5, epoch.val_loss = 0.7;
  epoch.val_accuracy = val_accuracy.value_or(NAN);
  epoch.seconds = 1.0, epoch.samples_per_s = 1.0;
  m.fit.epochs = {epoch};
  m.test = {0.6, test_accuracy.value_or(NAN), {}};
  m.settings = TrainingSettings{};
  return m;
}

// The weights files of these models.
inline std::set<std::string> weights_of(std::initializer_list<int> indices) {
  std::set<std::string> names;
  for (int i : indices) names.insert(name_of(size_t(i)) + ".weights");
  return names;
}

// The files in a folder.
inline std::set<std::string> files(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder))
    names.insert(entry.path().filename().string());
  return names;
}

// A test with a DIR of its own, removed before and after.
class BestFolder : public testing::Test {
 protected:
  void SetUp() override {
    const testing::TestInfo& t = *testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("mf_best_" + std::to_string(getpid()) + "_" + t.test_suite_name() + "_" + t.name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  SaveBest save(size_t k) const { return {k, dir_.string()}; }
  // What a worker does as its model ends ok: its weights in its staging file (a stand-in here).
  static void stage(const BestKeeper& keeper, const ModelReport& m) {
    std::ofstream(keeper.staging_file(m.name, m.index)) << "weights of " << m.name;
  }
  // The model ends in the keeper's process, as ModelWorker's does: the keeper saves it when it may
  // be among the best, then its report is final. Returns whether it was saved.
  static bool end(BestKeeper& keeper, const ModelReport& m) {
    bool saved = false;
    keeper.stage(m, [&] { stage(keeper, m), saved = true; });
    keeper.ended(m);
    return saved;
  }
  // The model ends in a processes-mode child, which saves it whenever it ends ok; then the parent's
  // keeper has its report.
  static void end_in_child(BestKeeper& keeper, const ModelReport& m) {
    if (m.status == ModelStatus::ok) stage(keeper, m);
    keeper.ended(m);
  }

  fs::path dir_;
};

}  // namespace mf::best_test
