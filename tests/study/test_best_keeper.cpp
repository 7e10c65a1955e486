// --save-best's keeper (study/best_keeper.h) on reports written here: which staged files it keeps as
// models end, by a metric given or by the default that the models reveal as they end; that its best
// are the first of rank_run's ranking; a corrected report; a run over several processes finished
// from their staging folders; the file names of models whose names are no file names.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/error.h"
#include "study/best_keeper.h"

namespace mf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Model i's name: m0, m1... (appended, not "m" + to_string(i), which GCC 12 warns of wrongly, -Wrestrict).
std::string name_of(size_t i) {
  std::string name = "m";
  return name += std::to_string(i);
}

// A model that ended ok with these metrics; absent ones it does not have (no validation rows, no
// test set).
ModelReport model(size_t index, std::optional<double> val_accuracy, std::optional<double> test_accuracy = 0.5,
                  double train_s = 1.0) {
  ModelReport m;
  m.index = index;
  m.name = name_of(index);
  m.fitted = true;
  m.has_accuracy = true;
  m.validated = val_accuracy.has_value();
  m.tested = test_accuracy.has_value();
  m.fit.train_s = train_s;
  EpochMetrics epoch;
  epoch.loss = 0.5, epoch.accuracy = 0.5, epoch.val_loss = 0.7, epoch.val_accuracy = val_accuracy.value_or(NAN);
  epoch.seconds = 1.0, epoch.samples_per_s = 1.0;
  m.fit.epochs = {epoch};
  m.test = {0.6, test_accuracy.value_or(NAN), {}};
  m.settings = TrainingSettings{};
  return m;
}

class Keeper : public testing::Test {
 protected:
  void SetUp() override {
    const testing::TestInfo& t = *testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("mf_keeper_" + std::to_string(getpid()) + "_" + t.name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  SaveBest save(size_t k) const { return {k, dir_.string()}; }
  // What a worker does as its model ends ok: its weights in its staging file (a stand-in here).
  static void stage(const BestKeeper& keeper, const ModelReport& m) {
    std::ofstream(keeper.staging_file(m.name, m.index)) << "weights of " << m.name;
  }
  // The model ends in the keeper's process, as ModelWorker's does: the keeper saves it when it may be
  // among the best, then its report is final. Returns whether it was saved.
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
  // The files in a folder.
  static std::set<std::string> files(const fs::path& folder) {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder)) names.insert(entry.path().filename().string());
    return names;
  }
  static std::set<std::string> weights_of(std::initializer_list<int> indices) {
    std::set<std::string> names;
    for (int i : indices) names.insert(name_of(size_t(i)) + ".weights");
    return names;
  }
  // A job per report, in sweep order, as make_jobs makes them.
  static std::vector<Job> jobs_of(size_t count) {
    std::vector<Job> jobs(count);
    for (size_t i = 0; i < count; ++i) {
      jobs[i].index = i;
      jobs[i].name = name_of(i);
      ModelSpec spec;
      spec.name = jobs[i].name;
      spec.input = 3;
      spec.layers = {{4, Activation::relu}, {1, Activation::sigmoid}};
      spec.loss = Loss::binary_crossentropy;
      jobs[i].spec = spec;
      jobs[i].data = "synthetic:teacher:rows=64";
    }
    return jobs;
  }

  fs::path dir_;
};

TEST_F(Keeper, KeepsTheBestKByTheMetricGivenAndDropsTheRest) {
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
TEST_F(Keeper, WhatAChildSavedIsDroppedWhenItsReportComes) {
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
TEST_F(Keeper, InItsProcessTheKeeperSavesOnlyWhatMayBeAmongTheBest) {
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
TEST_F(Keeper, ASaveThatFailsChangesNothing) {
  BestKeeper keeper(save(1), RankBy::val_accuracy);
  end(keeper, model(0, 0.5));
  EXPECT_THROW(keeper.stage(model(1, 0.9), [] { throw SystemError("full"); }), SystemError);
  ModelReport failed = model(1, 0.9);
  failed.status = ModelStatus::failed;  // ModelWorker fails the model whose save failed
  keeper.ended(failed);
  EXPECT_EQ(files(keeper.staging()), weights_of({0}));
}

// Ties rank by the place in the sweep, as rank_run does: the earlier stays.
TEST_F(Keeper, ATieKeepsTheEarlierModel) {
  BestKeeper keeper(save(1), RankBy::val_accuracy);
  end(keeper, model(4, 0.75));
  end(keeper, model(2, 0.75));
  end(keeper, model(9, 0.75));
  EXPECT_EQ(files(keeper.staging()), weights_of({2}));
}

// Without --rank-by, the metric is the first some model has: models without validation rows end
// first, and are kept by their test accuracy, until a validated one shows val_accuracy is the metric.
TEST_F(Keeper, WithoutAMetricItKeepsWhatTheDefaultMayChooseUntilAModelShowsIt) {
  BestKeeper keeper(save(2), std::nullopt);
  RunReport run;
  run.models = {model(0, std::nullopt, 0.9), model(1, std::nullopt, 0.8), model(2, std::nullopt, 0.7),
                model(3, 0.6, 0.1),          model(4, 0.65, 0.1),         model(5, 0.62, 0.99),
                model(6, std::nullopt, 0.99)};
  for (size_t i = 0; i < 3; ++i) end(keeper, run.models[i]);
  EXPECT_EQ(files(keeper.staging()), weights_of({0, 1}));  // by test accuracy (and by train_s: 0 and 1 too)
  end(keeper, run.models[3]);  // the first with val_accuracy: the metric of the ranking now
  EXPECT_EQ(files(keeper.staging()), weights_of({3}));
  for (size_t i = 4; i < 7; ++i) end(keeper, run.models[i]);  // 6 has no val_accuracy: never among the best now
  EXPECT_EQ(files(keeper.staging()), weights_of({4, 5}));

  // The same models ranked as the document ranks them: the kept are its first two.
  rank_run(run, std::nullopt);
  EXPECT_EQ(run.rank_by, "val_accuracy");
  const std::vector<BestModel> best = finish_best(keeper.save(), run, jobs_of(7), {keeper.staging()});
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].name, run.ranking[0]);
  EXPECT_EQ(best[1].name, run.ranking[1]);
  EXPECT_EQ(best[0].name, "m4");
  EXPECT_EQ(best[0].weights, (dir_ / "m4.weights").string());
  EXPECT_FALSE(fs::exists(keeper.staging()));
  EXPECT_EQ(files(dir_), (std::set<std::string>{"best.json", "m4.weights", "m4.spec.json", "m5.weights",
                                                "m5.spec.json"}));
  std::ifstream in(dir_ / "best.json");
  const json index = json::parse(in);
  EXPECT_EQ(index["rank_by"], "val_accuracy");
  EXPECT_EQ(index["k"], 2);
  ASSERT_EQ(index["models"].size(), 2u);
  EXPECT_EQ(index["models"][0]["rank"], 1);
  EXPECT_EQ(index["models"][0]["name"], "m4");
  EXPECT_EQ(index["models"][0]["index"], 4);
  EXPECT_EQ(index["models"][0]["value"], 0.65);
  EXPECT_EQ(index["models"][0]["weights"], "m4.weights");
  EXPECT_EQ(index["models"][0]["spec"], "m4.spec.json");
  EXPECT_EQ(index["models"][0]["settings"]["optimizer"], "adam");
  EXPECT_EQ(index["models"][1]["name"], "m5");
  // The spec beside the weights is the job's, with the data it trained on: what train --load needs.
  std::ifstream spec_in(dir_ / "m4.spec.json");
  const json spec = json::parse(spec_in);
  EXPECT_EQ(spec["name"], "m4");
  EXPECT_EQ(spec["data"], "synthetic:teacher:rows=64");
  std::ifstream weights(dir_ / "m4.weights");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(weights), {}), "weights of m4");  // moved, as staged
}

// A report corrected after it was final (every model of a process whose CUDA context was poisoned
// fails after the phase) takes its model out of the best, and its file out of the folder.
TEST_F(Keeper, ACorrectedReportSupersedesTheEarlier) {
  BestKeeper keeper(save(2), RankBy::val_accuracy);
  end(keeper, model(0, 0.9));
  end(keeper, model(1, 0.8));
  ModelReport failed = model(0, 0.9);
  failed.status = ModelStatus::failed;
  keeper.ended(failed);
  EXPECT_EQ(files(keeper.staging()), weights_of({1}));
  EXPECT_TRUE(end(keeper, model(2, 0.1)));  // room for one more again
}

// A run over two processes: each keeps its own best 2 in its own staging folder; the best 2 of the
// whole run, ranked over both processes' reports, are among them and finish from both folders.
TEST_F(Keeper, SeveralProcessesBestFinishFromTheirStagingFolders) {
  const double values[] = {0.3, 0.9, 0.4, 0.5, 0.95, 0.2, 0.6, 0.1};
  RunReport run;
  {
    BestKeeper rank0(save(2), std::nullopt, ".staging-0"), rank1(save(2), std::nullopt, ".staging-1");
    for (size_t i = 0; i < 8; ++i) {
      run.models.push_back(model(i, values[i]));
      end(i % 2 ? rank1 : rank0, run.models.back());  // rank 0 the even models, rank 1 the odd
    }
    EXPECT_EQ(files(rank0.staging()), weights_of({4, 6}));  // 0.95, 0.6
    EXPECT_EQ(files(rank1.staging()), weights_of({1, 3}));  // 0.9, 0.5
  }
  rank_run(run, std::nullopt);
  const std::vector<BestModel> best =
      finish_best(save(2), run, jobs_of(8), {(dir_ / ".staging-0").string(), (dir_ / ".staging-1").string()});
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].name, "m4");
  EXPECT_EQ(best[1].name, "m1");
  EXPECT_FALSE(best[1].weights.empty());
  EXPECT_EQ(files(dir_), (std::set<std::string>{"best.json", "m1.weights", "m1.spec.json", "m4.weights",
                                                "m4.spec.json"}));
}

// A run into a folder that holds an earlier run's best replaces them: DIR holds one run's best.
TEST_F(Keeper, AnEarlierRunsBestInTheFolderAreReplaced) {
  {
    BestKeeper keeper(save(2), RankBy::val_accuracy);
    RunReport run;
    for (size_t i = 0; i < 3; ++i) run.models.push_back(model(i, 0.1 * double(i)));
    for (const ModelReport& m : run.models) end(keeper, m);
    rank_run(run, RankBy::val_accuracy);
    finish_best(keeper.save(), run, jobs_of(3), {keeper.staging()});
  }
  std::ofstream(dir_ / "notes.txt") << "the user's";
  BestKeeper keeper(save(1), RankBy::val_accuracy);
  RunReport run;
  for (size_t i = 0; i < 3; ++i) run.models.push_back(model(i, 0.1 * double(2 - i)));
  for (const ModelReport& m : run.models) end(keeper, m);
  rank_run(run, RankBy::val_accuracy);
  finish_best(keeper.save(), run, jobs_of(3), {keeper.staging()});
  EXPECT_EQ(files(dir_), (std::set<std::string>{"best.json", "m0.weights", "m0.spec.json", "notes.txt"}));
}

// A resumed run takes on the staging folder of the run that was killed: the files of the models that
// ended then, which the journal gives back, stay candidates.
TEST_F(Keeper, AResumedRunTakesTheKilledRunsStagedFilesOn) {
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

TEST_F(Keeper, ABestModelWhoseWeightsWereNotKeptIsListedWithoutThem) {
  BestKeeper keeper(save(2), RankBy::val_accuracy);
  RunReport run;
  run.models = {model(0, 0.9), model(1, 0.5)};
  end(keeper, run.models[1]);  // model 0 came from a journal whose staging had no file of it
  rank_run(run, RankBy::val_accuracy);
  const std::vector<BestModel> best = finish_best(keeper.save(), run, jobs_of(2), {keeper.staging()});
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].name, "m0");
  EXPECT_TRUE(best[0].weights.empty());
  EXPECT_FALSE(best[1].weights.empty());
  std::ifstream in(dir_ / "best.json");
  EXPECT_TRUE(json::parse(in)["models"][0]["weights"].is_null());
}

TEST(BestFileStem, APlainNameIsItsOwnAndAnyOtherIsWrittenApart) {
  EXPECT_EQ(best_file_stem("tiny-lr0.001-s1", 0), "tiny-lr0.001-s1");
  EXPECT_EQ(best_file_stem("fmnist-h100x10-relu", 3), "fmnist-h100x10-relu");
  EXPECT_EQ(best_file_stem("a/b", 0), "a%2Fb");
  EXPECT_EQ(best_file_stem("a%2Fb", 1), "a%252Fb");  // so the two stay apart
  EXPECT_EQ(best_file_stem(".staging", 0), "%2Estaging");
  EXPECT_EQ(best_file_stem("..", 0), "%2E.");
  EXPECT_EQ(best_file_stem("two words", 0), "two%20words");
  const std::string longer(300, 'x');
  EXPECT_EQ(best_file_stem(longer, 17), std::string(180, 'x') + "~17");
  EXPECT_NE(best_file_stem(longer, 17), best_file_stem(longer + "y", 18));
}

}  // namespace
}  // namespace mf
