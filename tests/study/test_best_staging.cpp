// --save-best's staging folder and keeper (study/best/staging.h) on reports written here: which
// staged files it keeps as models end, in its process and from a processes-mode child; a save that
// fails; a corrected report; a resumed run; the ranks' folders gathered.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "runtime/error.h"
#include "study/best/staging.h"
#include "test_best_models.h"

namespace mf {
namespace {

namespace fs = std::filesystem;
using best_test::files;
using best_test::model;
using best_test::weights_of;
using Staging = best_test::BestFolder;

TEST_F(Staging, KeepsTheBestKByTheMetricGivenAndDropsTheRest) {
  BestKeeper keeper(save(2), RankBy::val_accuracy);
  EXPECT_TRUE(fs::is_directory(dir_ / ".staging"));
  const double values[] = {0.5, 0.7, 0.6, 0.9, 0.55, 0.8};
  for (size_t i = 0; i < 6; ++i) end(keeper, model(i, values[i]));
  EXPECT_EQ(files(keeper.staging()), weights_of({3, 5}));  // 0.9 and 0.8
  EXPECT_EQ(keeper.staged(), (std::vector<size_t>{3, 5}));
  // One worse than both is not even saved; one better is, and displaces the worse of the two.
  EXPECT_FALSE(end(keeper, model(6, 0.75)));
  EXPECT_TRUE(end(keeper, model(7, 0.85)));
  EXPECT_EQ(files(keeper.staging()), weights_of({3, 7}));
  // A diverged or failed one never, however good its metrics were.
  ModelReport diverged = model(8, 0.99), failed = model(9, 0.99);
  diverged.status = ModelStatus::diverged;
  failed.status = ModelStatus::failed;
  EXPECT_FALSE(end(keeper, diverged));
  EXPECT_FALSE(end(keeper, failed));
  EXPECT_EQ(files(keeper.staging()), weights_of({3, 7}));
}

// In processes mode the child saves every model that ends ok, and the keeper drops, as each report
// comes, what cannot be among the best: never more than K files and the models in flight.
TEST_F(Staging, WhatAChildSavedIsDroppedWhenItsReportComes) {
  BestKeeper keeper(save(2), RankBy::val_accuracy);
  for (size_t i = 0; i < 20; ++i) {
    end_in_child(keeper, model(i, 0.01 * double((i * 7) % 20)));
    EXPECT_LE(files(keeper.staging()).size(), 2u) << i;
  }
  EXPECT_EQ(files(keeper.staging()), weights_of({17, 14}));  // 0.19 and 0.18
  ModelReport diverged = model(20, 0.99);
  diverged.status = ModelStatus::diverged;
  stage(keeper, diverged);  // as a child that saved before its model was found diverged
  keeper.ended(diverged);
  EXPECT_EQ(files(keeper.staging()), weights_of({17, 14}));
}

// In the keeper's process a model is saved only while it is among the best so far: in a pack of
// members that end one after another, getting better, each displaces the last; never more than K
// files are on disk, also by the default metric, which the first member shows before any report
// is final.
TEST_F(Staging, InItsProcessTheKeeperSavesOnlyWhatMayBeAmongTheBest) {
  BestKeeper keeper(save(3), std::nullopt);
  std::vector<ModelReport> pack;
  for (size_t i = 0; i < 50; ++i) pack.push_back(model(i, 0.01 * double(i)));
  int saved = 0;
  for (const ModelReport& m : pack) {  // every member finishes, then the pack's reports are final
    keeper.stage(m, [&] { stage(keeper, m), ++saved; });
    EXPECT_LE(files(keeper.staging()).size(), 3u);
  }
  for (const ModelReport& m : pack) keeper.ended(m);
  EXPECT_EQ(saved, 50);  // each was the best so far when it ended
  EXPECT_EQ(files(keeper.staging()), weights_of({47, 48, 49}));
  // Getting worse, only the first K are saved at all.
  BestKeeper worse(save(3), RankBy::val_accuracy, ".staging-2");
  saved = 0;
  for (size_t i = 0; i < 50; ++i) saved += end(worse, model(i, 1 - 0.01 * double(i)));
  EXPECT_EQ(saved, 3);
}

// A save that fails changes nothing: the best stay as they were, with their files.
TEST_F(Staging, ASaveThatFailsChangesNothing) {
  BestKeeper keeper(save(1), RankBy::val_accuracy);
  end(keeper, model(0, 0.5));
  EXPECT_THROW(keeper.stage(model(1, 0.9), [] { throw SystemError("full"); }), SystemError);
  ModelReport failed = model(1, 0.9);
  failed.status = ModelStatus::failed;  // ModelWorker fails the model whose save failed
  keeper.ended(failed);
  EXPECT_EQ(files(keeper.staging()), weights_of({0}));
}

// A report corrected after it was final takes its model's file out of the folder.
TEST_F(Staging, ACorrectedReportRemovesItsFile) {
  BestKeeper keeper(save(2), RankBy::val_accuracy);
  end(keeper, model(0, 0.9));
  end(keeper, model(1, 0.8));
  ModelReport failed = model(0, 0.9);
  failed.status = ModelStatus::failed;
  keeper.ended(failed);
  EXPECT_EQ(files(keeper.staging()), weights_of({1}));
  EXPECT_TRUE(end(keeper, model(2, 0.1)));  // room for one more again
}

// A resumed run takes on the staging folder of the run that was killed: the files of the models
// that ended then, which the journal gives back, stay candidates.
TEST_F(Staging, AResumedRunTakesTheKilledRunsStagedFilesOn) {
  {
    BestKeeper killed(save(2), RankBy::val_accuracy);
    end(killed, model(0, 0.9));
    end(killed, model(1, 0.2));
  }  // killed here
  BestKeeper resumed(save(2), RankBy::val_accuracy, kStagingFolder, true);
  EXPECT_EQ(files(resumed.staging()), weights_of({0, 1}));
  resumed.resumed(model(0, 0.9));
  resumed.resumed(model(1, 0.2));
  resumed.resumed(model(2, 0.95));  // its file was never staged: nothing to keep
  end(resumed, model(3, 0.5));
  EXPECT_EQ(files(resumed.staging()), weights_of({0, 3}));
  // A fresh run over the same folder starts with an empty staging folder.
  BestKeeper fresh(save(2), RankBy::val_accuracy);
  EXPECT_TRUE(files(fresh.staging()).empty());
}

// A killed run over three ranks left a staging folder each: resumed, rank 0's takes every file on;
// not resumed, the other ranks' folders go, with their files.
TEST_F(Staging, TheRanksStagingFoldersAreGatheredIntoRankZerosOnResume) {
  const auto stage_in = [&](int rank, int index) {
    fs::create_directories(dir_ / staging_folder(rank));
    std::ofstream(dir_ / staging_folder(rank) / (best_test::name_of(index) + ".weights")) << index;
  };
  for (bool resume : {true, false}) {
    stage_in(0, 0), stage_in(1, 1), stage_in(2, 2), stage_in(2, 3);
    std::ofstream(dir_ / ".staging.rank-x") << "not a rank's";
    gather_staging(save(2), resume);
    EXPECT_EQ(files(dir_), (std::set<std::string>{".staging", ".staging.rank-x"})) << resume;
    EXPECT_EQ(files(dir_ / ".staging"), resume ? weights_of({0, 1, 2, 3}) : weights_of({0}));
    fs::remove_all(dir_);
  }
}

}  // namespace
}  // namespace mf
