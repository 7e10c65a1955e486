// Keras's sample_weight and class_weight as the data's weight column (data/dataset.h) and as the
// spec's fit settings: which weight each row gets, where the column comes from, and what is
// refused.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "data/dataset.h"
#include "nn/spec.h"
#include "runtime/error.h"
#include "test_support.h"

namespace mf {
namespace {

using nlohmann::json;
using test::user_error;
using testing::ElementsAre;
using testing::HasSubstr;

// Keras 3's class_weight_to_sample_weights on the same labels gives these (a class index rounded
// as np.round does, half to even; a one-hot row's class its first largest column).
TEST(ClassWeights, EachRowTakesItsClasssWeightOrOne) {
  const ClassWeights weights{{0, 2.f}, {1, 0.5f}, {2, 4.f}};
  EXPECT_THAT(class_weights_of(std::vector<float>{0, 1, 2, 1, 5}, 1, weights),
              ElementsAre(2.f, 0.5f, 4.f, 0.5f, 1.f));
  EXPECT_THAT(class_weights_of(std::vector<float>{0.5f, 1.5f, 2.5f, 0.49f}, 1, weights),
              ElementsAre(2.f, 4.f, 4.f, 2.f));
  EXPECT_THAT(class_weights_of(std::vector<float>{0, 1, 0, 1, 0, 0, 0.5f, 0.5f, 0}, 3, weights),
              ElementsAre(0.5f, 2.f, 2.f));
  EXPECT_THAT(class_weights_of(std::vector<float>{-1, 3e9f}, 1, weights), ElementsAre(1.f, 1.f));
}

TEST(ClassWeights, TheColumnFollowsEachRowsTargets) {
  EXPECT_THAT(with_weight_column(std::vector<float>{1, 2, 3, 4}, 2, std::vector<float>{5, 6}),
              ElementsAre(1, 2, 5, 3, 4, 6));
  Dataset data;
  data.rows = 3, data.target_cols = 1, data.y = {0, 1, 1};
  weigh_by_class(data, {{1, 3.f}});
  EXPECT_EQ(data.weights, RowWeights::by_class);
  EXPECT_EQ(data.y_cols(), 2);
  EXPECT_THAT(data.y, ElementsAre(0, 1, 1, 3, 1, 3));
}

class SampleWeightColumn : public test::TempDirTest {};

// The weight is the last column of a CSV row; the labels' summary leaves it out (a weight of 7
// would otherwise make 8 classes).
TEST_F(SampleWeightColumn, ACsvRowEndsWithItsWeight) {
  const std::string file = write("train.csv", "1,2,0,0.5\n3,4,1,7\n5,6,1,0\n");
  const DataSplit split = load_data("csv:" + file, 1, true);
  const Dataset& d = split.train;
  EXPECT_EQ(d.features, 2);
  EXPECT_EQ(d.target_cols, 1);
  EXPECT_EQ(d.weights, RowWeights::sample);
  EXPECT_THAT(d.y, ElementsAre(0, 0.5f, 1, 7, 1, 0));
  EXPECT_EQ(d.classes, 2);
  EXPECT_EQ(load_data("csv:" + file, 1, false).train.features, 3);  // without: a feature
}

TEST_F(SampleWeightColumn, ASourceWithoutOneIsRefused) {
  EXPECT_THAT(user_error([] { load_data("synthetic:binary:rows=8", 1, true); }),
              HasSubstr("fit.sample_weight reads each row's weight after its targets, which only "
                        "CSV or .npy files hold"));
  Dataset one_column;
  one_column.rows = 2, one_column.y = {0, 1};
  EXPECT_THAT(user_error([&] { take_sample_weights(one_column, "y.npy"); }),
              HasSubstr("y.npy: one target value per row"));
}

json spec_with_fit(const json& fit) {
  return {{"input", 2},
          {"layers", {{{"units", 3}, {"activation", "softmax"}}}},
          {"loss", "sparse_categorical_crossentropy"},
          {"fit", fit}};
}

TEST(RowWeightSpec, ClassWeightsAndTheSampleWeightFlagAreRead) {
  const ModelSpec spec =
      parse_model_spec(spec_with_fit({{"class_weight", {{"0", 1.5}, {"2", 0}}}}), "s.json");
  EXPECT_EQ(spec.fit.class_weight, (ClassWeights{{0, 1.5f}, {2, 0.f}}));
  EXPECT_EQ(spec.row_weights(), RowWeights::by_class);
  EXPECT_EQ(spec.y_cols(), 2);
  EXPECT_EQ(parse_model_spec(to_json(spec), "again"), spec);
  const ModelSpec sampled = parse_model_spec(spec_with_fit({{"sample_weight", true}}), "s.json");
  EXPECT_EQ(sampled.row_weights(), RowWeights::sample);
  EXPECT_EQ(parse_model_spec(to_json(sampled), "again"), sampled);
  EXPECT_EQ(parse_model_spec(spec_with_fit(json::object()), "s.json").y_cols(), 1);
}

TEST(RowWeightSpec, WhatKerasWouldNotMeanIsRefusedInOneLine) {
  const auto error = [](const json& fit) {
    return user_error([&] { parse_model_spec(spec_with_fit(fit), "s.json"); });
  };
  EXPECT_THAT(error({{"class_weight", {{"one", 1}}}}),
              HasSubstr("s.json: fit.class_weight: key \"one\" is not a class index"));
  EXPECT_THAT(error({{"class_weight", {{"0", -1}}}}),
              HasSubstr("fit.class_weight.0: got -1; expected a finite number >= 0"));
  EXPECT_THAT(error({{"class_weight", json::array({1, 2})}}),
              HasSubstr("fit.class_weight: got [1,2]; expected an object of class indices"));
  EXPECT_THAT(error({{"sample_weight", true}, {"class_weight", {{"0", 2}}}}),
              HasSubstr("fit: sample_weight and class_weight are both set"));
}

}  // namespace
}  // namespace mf
