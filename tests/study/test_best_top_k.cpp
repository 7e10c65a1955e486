// --save-best's top K (study/best/top_k.h), without files, against cases worked by hand: what each
// offer keeps and drops by a metric given, ties, a corrected report, and the default metric that
// the models reveal as they end.
#include <gtest/gtest.h>

#include "study/best/top_k.h"
#include "test_best_models.h"

namespace mf {
namespace {

using best_test::model;
using best_test::name_of;

// The models an offer drops, by index, in the order given.
std::vector<size_t> dropped(const TopK::Offer& offer) {
  std::vector<size_t> indices;
  for (const TopK::Dropped& m : offer.drop) {
    EXPECT_EQ(m.name, name_of(m.index));
    indices.push_back(m.index);
  }
  return indices;
}

using Indices = std::vector<size_t>;

TEST(BestTopK, KeepsTheBestKByTheMetricGivenAndDropsTheDisplaced) {
  TopK best(2, RankBy::val_accuracy);
  TopK::Offer offer = best.offer(model(0, 0.5));
  EXPECT_TRUE(offer.keep);
  EXPECT_EQ(dropped(offer), Indices{});
  offer = best.offer(model(1, 0.7));
  EXPECT_TRUE(offer.keep);
  EXPECT_EQ(dropped(offer), Indices{});
  offer = best.offer(model(2, 0.6));  // 0.7, 0.6: 0.5 goes
  EXPECT_TRUE(offer.keep);
  EXPECT_EQ(dropped(offer), Indices{0});
  offer = best.offer(model(3, 0.9));  // 0.9, 0.7: 0.6 goes
  EXPECT_TRUE(offer.keep);
  EXPECT_EQ(dropped(offer), Indices{2});
  EXPECT_FALSE(best.admits(model(4, 0.55)));
  offer = best.offer(model(4, 0.55));  // worse than both: not kept, nothing dropped
  EXPECT_FALSE(offer.keep);
  EXPECT_EQ(dropped(offer), Indices{});
  EXPECT_EQ(best.kept(), (Indices{1, 3}));
  EXPECT_TRUE(best.admits(model(5, 0.8)));
}

TEST(BestTopK, AModelNotOkIsNeverKeptHoweverGoodItsMetrics) {
  TopK best(2, std::nullopt);
  ModelReport diverged = model(0, 0.99), failed = model(1, 0.99);
  diverged.status = ModelStatus::diverged;
  failed.status = ModelStatus::failed;
  for (const ModelReport& m : {diverged, failed}) {
    EXPECT_FALSE(best.admits(m));
    EXPECT_FALSE(best.offer(m).keep);
  }
  EXPECT_TRUE(best.kept().empty());
}

// Ties rank by the place in the sweep, as rank_run does: the earlier stays.
TEST(BestTopK, ATieKeepsTheEarlierModel) {
  TopK best(1, RankBy::val_accuracy);
  EXPECT_TRUE(best.offer(model(4, 0.75)).keep);
  const TopK::Offer earlier = best.offer(model(2, 0.75));
  EXPECT_TRUE(earlier.keep);
  EXPECT_EQ(dropped(earlier), Indices{4});
  EXPECT_FALSE(best.admits(model(9, 0.75)));
  EXPECT_FALSE(best.offer(model(9, 0.75)).keep);
  EXPECT_EQ(best.kept(), Indices{2});
}

// A report corrected after it was final (every model of a process whose CUDA context was poisoned
// fails after the phase) takes its model out of the best, which has room again.
TEST(BestTopK, ACorrectedReportSupersedesTheEarlier) {
  TopK best(2, RankBy::val_accuracy);
  best.offer(model(0, 0.9));
  best.offer(model(1, 0.8));
  EXPECT_FALSE(best.admits(model(2, 0.1)));
  ModelReport failed = model(0, 0.9);
  failed.status = ModelStatus::failed;
  const TopK::Offer corrected = best.offer(failed);
  EXPECT_FALSE(corrected.keep);
  EXPECT_EQ(dropped(corrected), Indices{});  // the model offered is not among the dropped
  EXPECT_EQ(best.kept(), Indices{1});
  EXPECT_TRUE(best.admits(model(2, 0.1)));
  // The same report again changes nothing.
  const TopK::Offer again = best.offer(model(1, 0.8));
  EXPECT_TRUE(again.keep);
  EXPECT_EQ(dropped(again), Indices{});
  EXPECT_EQ(best.kept(), Indices{1});
}

// Without --rank-by, models without validation rows end first: kept by test accuracy, the first
// metric they have, until a validated one shows that val_accuracy is the ranking's metric.
TEST(BestTopK, WithoutAMetricItKeepsWhatTheDefaultMayChooseUntilAModelShowsIt) {
  TopK best(2, std::nullopt);
  best.offer(model(0, std::nullopt, 0.9));
  best.offer(model(1, std::nullopt, 0.8));
  EXPECT_FALSE(best.offer(model(2, std::nullopt, 0.7)).keep);  // by test accuracy 0 and 1
  EXPECT_EQ(best.kept(), (Indices{0, 1}));
  // The first with val_accuracy is the best of it, however low.
  const ModelReport validated = model(3, 0.1, 0.1);
  EXPECT_TRUE(best.admits(validated));
  const TopK::Offer shown = best.offer(validated);
  EXPECT_TRUE(shown.keep);
  EXPECT_EQ(dropped(shown), (Indices{0, 1}));
  EXPECT_EQ(best.kept(), Indices{3});
  // One without val_accuracy can no longer be among the best, however high its test accuracy.
  EXPECT_FALSE(best.admits(model(4, std::nullopt, 0.99)));
  EXPECT_TRUE(best.offer(model(5, 0.2)).keep);
  const TopK::Offer better = best.offer(model(6, 0.3));
  EXPECT_EQ(dropped(better), Indices{3});
  EXPECT_EQ(best.kept(), (Indices{5, 6}));
}

// Without --rank-by the ranking's metric only moves towards the front of kRankByNames: a model
// whose first metric is earlier than every other model's moves it there, and the best so far go;
// one that has only later metrics is never among the best.
TEST(BestTopK, WithoutAMetricTheRankingOnlyMovesTowardsTheFront) {
  TopK best(2, std::nullopt);
  const ModelReport timed = model(0, std::nullopt, std::nullopt, 5.0);  // train_s only
  EXPECT_TRUE(best.offer(timed).keep);
  const TopK::Offer tested = best.offer(model(1, std::nullopt, 0.5));  // test_accuracy
  EXPECT_TRUE(tested.keep);
  EXPECT_EQ(dropped(tested), Indices{0});
  EXPECT_FALSE(best.admits(model(2, std::nullopt, std::nullopt, 0.1)));  // faster, but train_s only
  ModelReport regression = model(3, 0.9);  // no accuracy metric: val_loss its first
  regression.has_accuracy = false;
  const TopK::Offer validated = best.offer(regression);
  EXPECT_TRUE(validated.keep);
  EXPECT_EQ(dropped(validated), Indices{1});
  const TopK::Offer classified = best.offer(model(4, 0.1));  // val_accuracy, the front
  EXPECT_TRUE(classified.keep);
  EXPECT_EQ(dropped(classified), Indices{3});
  EXPECT_EQ(best.kept(), Indices{4});
}

}  // namespace
}  // namespace mf
