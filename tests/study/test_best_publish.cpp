// --save-best's end (study/best/publish.h): the best K of rank_run's ranking moved into DIR beside
// their specs, with best.json, from one staging folder or several (a run over several processes);
// an earlier run's best replaced; a best model whose weights were not kept. And the ranking's
// default where models have no validation or test metric.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "study/best/publish.h"
#include "study/best/staging.h"
#include "test_best_models.h"

namespace mf {
namespace {

namespace fs = std::filesystem;
using best_test::files;
using best_test::model;
using best_test::name_of;
using nlohmann::json;
using Publish = best_test::BestFolder;
using Names = std::set<std::string>;

// A job per report, in sweep order, as make_jobs makes them.
std::vector<Job> jobs_of(size_t count) {
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

// The keeper's best, by the default metric the models reveal as they end, are the first of the
// document's ranking, and finish into DIR with their specs and the index.
TEST_F(Publish, TheKeepersBestAreTheRankingsFirstAndFinishIntoTheFolder) {
  BestKeeper keeper(save(2), std::nullopt);
  RunReport run;
  run.models = {model(0, std::nullopt, 0.9), model(1, std::nullopt, 0.8),
                model(2, std::nullopt, 0.7), model(3, 0.6, 0.1),
                model(4, 0.65, 0.1),         model(5, 0.62, 0.99),
                model(6, std::nullopt, 0.99)};
  for (const ModelReport& m : run.models) end(keeper, m);
  rank_run(run, std::nullopt);
  EXPECT_EQ(run.rank_by, "val_accuracy");
  const std::vector<BestModel> best =
      finish_best(keeper.save(), run, jobs_of(7), {keeper.staging()});
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].name, run.ranking[0]);
  EXPECT_EQ(best[1].name, run.ranking[1]);
  EXPECT_EQ(best[0].name, "m4");
  EXPECT_EQ(best[0].weights, (dir_ / "m4.weights").string());
  EXPECT_FALSE(fs::exists(keeper.staging()));
  EXPECT_EQ(files(dir_),
            (Names{"best.json", "m4.weights", "m4.spec.json", "m5.weights", "m5.spec.json"}));
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
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(weights), {}), "weights of m4");
}

// A run over two processes: each keeps its own best 2 in its own staging folder; the best 2 of the
// whole run, ranked over both processes' reports, are among them and finish from both folders.
TEST_F(Publish, SeveralProcessesBestFinishFromTheirStagingFolders) {
  const double values[] = {0.3, 0.9, 0.4, 0.5, 0.95, 0.2, 0.6, 0.1};
  RunReport run;
  {
    BestKeeper rank0(save(2), std::nullopt, ".staging-0");
    BestKeeper rank1(save(2), std::nullopt, ".staging-1");
    for (size_t i = 0; i < 8; ++i) {
      run.models.push_back(model(i, values[i]));
      end(i % 2 ? rank1 : rank0, run.models.back());  // rank 0 the even models, rank 1 the odd
    }
    EXPECT_EQ(files(rank0.staging()), best_test::weights_of({4, 6}));  // 0.95, 0.6
    EXPECT_EQ(files(rank1.staging()), best_test::weights_of({1, 3}));  // 0.9, 0.5
  }
  rank_run(run, std::nullopt);
  const std::vector<BestModel> best = finish_best(
      save(2), run, jobs_of(8), {(dir_ / ".staging-0").string(), (dir_ / ".staging-1").string()});
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].name, "m4");
  EXPECT_EQ(best[1].name, "m1");
  EXPECT_FALSE(best[1].weights.empty());
  EXPECT_EQ(files(dir_),
            (Names{"best.json", "m1.weights", "m1.spec.json", "m4.weights", "m4.spec.json"}));
}

// A run into a folder that holds an earlier run's best replaces them: DIR holds one run's best.
TEST_F(Publish, AnEarlierRunsBestInTheFolderAreReplaced) {
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
  EXPECT_EQ(files(dir_), (Names{"best.json", "m0.weights", "m0.spec.json", "notes.txt"}));
}

TEST_F(Publish, ABestModelWhoseWeightsWereNotKeptIsListedWithoutThem) {
  BestKeeper keeper(save(2), RankBy::val_accuracy);
  RunReport run;
  run.models = {model(0, 0.9), model(1, 0.5)};
  end(keeper, run.models[1]);  // model 0 came from a journal whose staging had no file of it
  rank_run(run, RankBy::val_accuracy);
  const std::vector<BestModel> best =
      finish_best(keeper.save(), run, jobs_of(2), {keeper.staging()});
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].name, "m0");
  EXPECT_TRUE(best[0].weights.empty());
  EXPECT_FALSE(best[1].weights.empty());
  std::ifstream in(dir_ / "best.json");
  EXPECT_TRUE(json::parse(in)["models"][0]["weights"].is_null());
}

// Models with neither validation rows nor a test set rank by their last epoch's training loss
// (lowest first), not by train_s, which would make the fastest model the best; train_s only when
// asked, or where no model has a loss.
TEST(Ranking, WithoutValidationOrTestTheTrainingLossRanks) {
  RunReport run;
  for (size_t i = 0; i < 3; ++i) {
    ModelReport m = best_test::model(i, std::nullopt, std::nullopt, 1.0 + double(i));
    m.fit.epochs[0].loss = 0.9 - 0.2 * double(i);  // the slowest has the lowest loss
    run.models.push_back(m);
  }
  rank_run(run, std::nullopt);
  EXPECT_EQ(run.rank_by, "loss");
  EXPECT_EQ(run.ranking, (std::vector<std::string>{name_of(2), name_of(1), name_of(0)}));
  rank_run(run, RankBy::train_s);
  EXPECT_EQ(run.ranking, (std::vector<std::string>{name_of(0), name_of(1), name_of(2)}));
  for (ModelReport& m : run.models) m.fit.epochs.clear();  // trained nothing (--epochs 0)
  rank_run(run, std::nullopt);
  EXPECT_EQ(run.rank_by, "train_s");
}

}  // namespace
}  // namespace mf
