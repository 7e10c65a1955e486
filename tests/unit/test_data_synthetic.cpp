// make_synthetic: shapes, value ranges, determinism and spec errors.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "data/dataset.h"
#include "runtime/error.h"
#include "test_support.h"

namespace mf {
namespace {

using testing::AllOf;
using testing::HasSubstr;

// The message of the UserError that make_synthetic(spec) throws.
std::string spec_error(const std::string& spec) {
  SCOPED_TRACE("spec " + spec);
  return test::user_error([&] { make_synthetic(spec); });
}

int count_label(const Dataset& d, float label) {
  return int(std::count(d.y.begin(), d.y.end(), label));
}

void expect_in_range(const std::vector<float>& values, float lo, float hi) {
  const auto [min, max] = std::minmax_element(values.begin(), values.end());
  EXPECT_GE(*min, lo);
  EXPECT_LT(*max, hi);
}

TEST(Synthetic, BinaryDefaultsAreTheKerasToyExample) {
  const DataSplit s = make_synthetic("binary");
  EXPECT_EQ(s.description,
            "synthetic:binary:rows=1024,features=20,seed=1234 (1024 train, 256 test)");
  EXPECT_EQ(s.train.rows, 1024);
  EXPECT_EQ(s.train.features, 20);
  EXPECT_EQ(s.train.target_cols, 1);
  EXPECT_EQ(s.train.classes, 2);
  ASSERT_EQ(s.train.x.size(), 1024u * 20);
  ASSERT_EQ(s.train.y.size(), 1024u);
  expect_in_range(s.train.x, 0, 1);
  EXPECT_EQ(count_label(s.train, 0) + count_label(s.train, 1), 1024);
  EXPECT_GT(count_label(s.train, 1), 400);
  EXPECT_GT(count_label(s.train, 0), 400);
  ASSERT_TRUE(s.test);
  EXPECT_EQ(s.test->rows, 256);
  EXPECT_EQ(s.test->features, 20);
  EXPECT_EQ(s.test->x.size(), 256u * 20);
  EXPECT_EQ(s.test->classes, 2);
}

TEST(Synthetic, FirstValuesFollowTheSeed) {
  // SplitMix64 from the seed 1234 forked to stream 0, 24-bit uniforms, computed independently.
  const DataSplit s = make_synthetic("binary");
  EXPECT_EQ(s.train.x[0], 9276351 / 16777216.0f);
  EXPECT_EQ(s.train.x[1], 11487766 / 16777216.0f);
  EXPECT_EQ(s.train.x[2], 15226443 / 16777216.0f);
}

TEST(Synthetic, RegressionDefaults) {
  const DataSplit s = make_synthetic("regression");
  EXPECT_EQ(s.train.rows, 1024);
  EXPECT_EQ(s.train.features, 20);
  EXPECT_EQ(s.train.classes, 0);
  expect_in_range(s.train.x, 0, 1);
  expect_in_range(s.train.y, 0, 1);
  // Targets are spread over [0,1), not labels.
  const auto fractional = [](float y) { return y != std::floor(y); };
  EXPECT_GT(std::count_if(s.train.y.begin(), s.train.y.end(), fractional), 1000);
  EXPECT_EQ(s.test->rows, 256);
}

TEST(Synthetic, TeacherDefaultsAreBalanced) {
  const DataSplit s = make_synthetic("teacher");
  EXPECT_EQ(s.description,
            "synthetic:teacher:rows=4096,features=20,classes=2,seed=1234 (4096 train, 1024 test)");
  EXPECT_EQ(s.train.rows, 4096);
  EXPECT_EQ(s.train.features, 20);
  EXPECT_EQ(s.train.classes, 2);
  expect_in_range(s.train.x, -1, 1);
  EXPECT_LT(*std::min_element(s.train.x.begin(), s.train.x.end()), -0.99f);  // centred, not [0,1)
  for (const Dataset* d : {&s.train, &*s.test}) {
    const int zeros = count_label(*d, 0), ones = count_label(*d, 1);
    EXPECT_EQ(zeros + ones, d->rows);
    EXPECT_GE(zeros, d->rows / 10);
    EXPECT_GE(ones, d->rows / 10);
  }
  EXPECT_EQ(s.test->rows, 1024);
}

TEST(Synthetic, TeacherBalancedForOtherSeeds) {
  for (const char* spec :
       {"teacher:seed=1", "teacher:seed=2,features=3", "teacher:seed=77,features=100"}) {
    const Dataset d = make_synthetic(spec).train;
    EXPECT_GE(count_label(d, 0), d.rows / 10) << spec;
    EXPECT_GE(count_label(d, 1), d.rows / 10) << spec;
  }
}

TEST(Synthetic, TeacherWithManyClasses) {
  const DataSplit s = make_synthetic("teacher:classes=4,rows=2000");
  EXPECT_EQ(s.train.classes, 4);
  EXPECT_EQ(s.test->classes, 4);
  int present = 0;
  for (float label = 0; label < 4; ++label) present += count_label(s.train, label) > 0;
  EXPECT_GE(present, 3);
  for (float y : s.train.y) ASSERT_TRUE(y == 0 || y == 1 || y == 2 || y == 3) << y;
  for (float y : s.test->y) ASSERT_TRUE(y == 0 || y == 1 || y == 2 || y == 3) << y;
}

TEST(Synthetic, TeacherLabelsDependOnlyOnTheSeedAndTheRow) {
  // More rows extend the same stream with the same teacher: the first rows are unchanged.
  const Dataset small = make_synthetic("teacher:rows=100").train;
  const Dataset large = make_synthetic("teacher:rows=300").train;
  EXPECT_TRUE(std::equal(small.x.begin(), small.x.end(), large.x.begin()));
  EXPECT_TRUE(std::equal(small.y.begin(), small.y.end(), large.y.begin()));
}

TEST(Synthetic, KeysSetTheShape) {
  const DataSplit s = make_synthetic("regression:rows=10,features=3,seed=7");
  EXPECT_EQ(s.train.rows, 10);
  EXPECT_EQ(s.train.features, 3);
  EXPECT_EQ(s.train.x.size(), 30u);
  EXPECT_EQ(s.test->rows, 2);
  EXPECT_EQ(make_synthetic("binary:rows=3").test->rows, 1);  // rows/4, at least 1
}

TEST(Synthetic, SameSpecSameData) {
  for (const char* spec : {"binary", "regression:seed=5", "teacher:classes=3"}) {
    const DataSplit a = make_synthetic(spec), b = make_synthetic(spec);
    EXPECT_EQ(a.train.x, b.train.x) << spec;
    EXPECT_EQ(a.train.y, b.train.y) << spec;
    EXPECT_EQ(a.test->x, b.test->x) << spec;
    EXPECT_EQ(a.test->y, b.test->y) << spec;
  }
}

TEST(Synthetic, OtherSeedOtherData) {
  const DataSplit a = make_synthetic("teacher:seed=1"), b = make_synthetic("teacher:seed=2");
  EXPECT_NE(a.train.x, b.train.x);
  EXPECT_NE(a.train.y, b.train.y);
  EXPECT_EQ(make_synthetic("binary").train.x, make_synthetic("binary:seed=1234").train.x);
}

TEST(Synthetic, TestSetIsAnotherStream) {
  const DataSplit s = make_synthetic("binary");
  EXPECT_FALSE(std::equal(s.test->x.begin(), s.test->x.end(), s.train.x.begin()));
}

TEST(Synthetic, UnknownKind) {
  EXPECT_THAT(spec_error("spiral:rows=5"),
              AllOf(HasSubstr("synthetic:spiral:rows=5: unknown kind 'spiral'"),
                    HasSubstr("KIND binary, regression or teacher")));
  EXPECT_THAT(spec_error(""), HasSubstr("unknown kind ''"));
}

TEST(Synthetic, UnknownOrRepeatedKey) {
  EXPECT_THAT(spec_error("binary:size=3"),
              AllOf(HasSubstr("synthetic:binary:size=3: unknown key 'size'"),
                    HasSubstr("keys rows, features, classes (teacher only), seed")));
  EXPECT_THAT(spec_error("binary:rows=3,rows=4"), HasSubstr("key 'rows' appears twice"));
  EXPECT_THAT(spec_error("binary:rows"), HasSubstr("'rows' is not key=value"));
  EXPECT_THAT(spec_error("binary:"), HasSubstr("'' is not key=value"));
  EXPECT_THAT(spec_error("binary:classes=2"), HasSubstr("key 'classes' applies only to teacher"));
}

TEST(Synthetic, BadValues) {
  EXPECT_THAT(spec_error("binary:rows=0"),
              HasSubstr("key 'rows' has value '0', which is not an integer in 1..2147483647"));
  EXPECT_THAT(spec_error("regression:features=-4"), HasSubstr("key 'features' has value '-4'"));
  EXPECT_THAT(spec_error("binary:rows=1.5"), HasSubstr("key 'rows' has value '1.5'"));
  EXPECT_THAT(spec_error("binary:rows="), HasSubstr("key 'rows' has value ''"));
  EXPECT_THAT(spec_error("binary:seed=-1"),
              HasSubstr("key 'seed' has value '-1', which is not a non-negative integer"));
  EXPECT_THAT(spec_error("teacher:classes=1"),
              HasSubstr("key 'classes' is 1, but a teacher needs at least 2 classes"));
  EXPECT_THAT(
      spec_error("binary:rows=100000000,features=100"),
      HasSubstr("100000000 rows of 100 features are more than the 2147483647 values allowed"));
  EXPECT_NO_THROW(make_synthetic("binary:seed=0,rows=1,features=1"));
}

}  // namespace
}  // namespace mf
