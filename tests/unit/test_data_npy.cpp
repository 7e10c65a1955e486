// The npy:X,Y[,XTEST,YTEST] data source on .npy files written here byte by byte, as numpy.save
// writes them (numpy.lib.format: version 1.0, a header padded to a multiple of 64 bytes), good and
// broken.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "data/dataset.h"
#include "runtime/error.h"
#include "test_support.h"

namespace mf {
namespace {

using test::user_error;
using testing::HasSubstr;

// A .npy file of dtype `descr` and `shape` ("(3, 2)") holding `data`'s bytes.
std::string npy(const std::string& descr, const std::string& shape, const void* data,
                size_t bytes) {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string file = "\x93NUMPY";
  file += char(1);
  file += char(0);
  const uint16_t n = uint16_t(header.size());
  file.append(reinterpret_cast<const char*>(&n), 2);
  file += header;
  file.append(static_cast<const char*>(data), bytes);
  return file;
}

class NpySource : public test::TempDirTest {};

TEST_F(NpySource, ReadsFloatRowsAndIntegerLabels) {
  const float x[] = {1, 2, 3, 4, 5, 6};
  const int64_t y[] = {0, 2, 1};
  const std::string xs = write("x.npy", npy("<f4", "(3, 2)", x, sizeof x));
  const std::string ys = write("y.npy", npy("<i8", "(3,)", y, sizeof y));
  const DataSplit split = load_data("npy:" + xs + "," + ys);
  EXPECT_EQ(split.train.rows, 3);
  EXPECT_EQ(split.train.features, 2);
  EXPECT_EQ(split.train.target_cols, 1);
  EXPECT_EQ(split.train.classes, 3);
  EXPECT_EQ(split.train.x, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(split.train.y, (std::vector<float>{0, 2, 1}));
  EXPECT_EQ(split.train.label_at, ys + "[1]: label 2");
  EXPECT_FALSE(split.test);
  EXPECT_FALSE(has_test_set("npy:" + xs + "," + ys));
}

// A value that is not finite is refused where it is, x's or y's, before anything trains; a double
// beyond float32's range becomes inf, and is refused too.
TEST_F(NpySource, NaNAndInfinityAreRefusedByRowAndColumn) {
  const float nan = std::nanf(""), inf = INFINITY;
  const float x[] = {1, 2, 3, nan, 5, 6};
  const int64_t y[] = {0, 2, 1};
  const std::string xs = write("x.npy", npy("<f4", "(3, 2)", x, sizeof x));
  const std::string ys = write("y.npy", npy("<i8", "(3,)", y, sizeof y));
  EXPECT_THAT(user_error([&] { load_data("npy:" + xs + "," + ys); }),
              HasSubstr(xs + "[1, 1] is NaN: a model cannot train"));
  const double wide[] = {1, 2, 3, 4, 5, 1e300};
  const float ok[] = {1, 2, 3, 4, 5, 6}, labels[] = {0, -inf, 1};
  EXPECT_THAT(
      user_error([&] {
        load_data("npy:" + write("w.npy", npy("<f8", "(3, 2)", wide, sizeof wide)) + "," + ys);
      }),
      HasSubstr("w.npy[2, 1] is inf"));
  const std::string bad_y = write("by.npy", npy("<f4", "(3,)", labels, sizeof labels));
  EXPECT_THAT(
      user_error([&] {
        load_data("npy:" + write("ok.npy", npy("<f4", "(3, 2)", ok, sizeof ok)) + "," + bad_y);
      }),
      HasSubstr(bad_y + "[1] is -inf"));
}

TEST_F(NpySource, ImagesAreFlattenedDoublesConvertedAndATestSetRead) {
  const double x[] = {0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4};  // 2 images of 2x2
  const float y[] = {0.25f, -1};                        // regression targets: no classes
  const std::string xs = write("x.npy", npy("<f8", "(2, 2, 2)", x, sizeof x));
  const std::string ys = write("y.npy", npy("<f4", "(2,)", y, sizeof y));
  const std::string source = "npy:" + xs + "," + ys + "," + xs + "," + ys;
  const DataSplit split = load_data(source);
  EXPECT_EQ(split.train.features, 4);
  EXPECT_EQ(split.train.x[7], 4.f);
  EXPECT_EQ(split.train.classes, 0);
  EXPECT_EQ(split.train.label_at, ys + "[0]: label 0.25");
  ASSERT_TRUE(split.test);
  EXPECT_EQ(split.test->rows, 2);
  EXPECT_TRUE(has_test_set(source));
  // At most 4 bytes of data for each byte of the files (each named twice, for train and test).
  const size_t files = std::filesystem::file_size(xs) + std::filesystem::file_size(ys);
  EXPECT_EQ(data_bytes_bound(source), 4 * 2 * files);
}

TEST_F(NpySource, TargetColumnsMustBeTheSpecs) {
  const float x[] = {1, 2}, y[] = {0, 1, 1, 0};
  const std::string xs = write("x.npy", npy("<f4", "(2, 1)", x, sizeof x));
  const std::string ys = write("y.npy", npy("<f4", "(2, 2)", y, sizeof y));
  EXPECT_EQ(load_data("npy:" + xs + "," + ys, 2).train.target_cols, 2);
  EXPECT_THAT(user_error([&] { load_data("npy:" + xs + "," + ys); }),
              HasSubstr("y has 2 target columns, but the spec's targets is 1"));
  // with sample weights the last column is each row's weight
  const Dataset weighted = load_data("npy:" + xs + "," + ys, 1, true).train;
  EXPECT_EQ(weighted.target_cols, 1);
  EXPECT_EQ(weighted.weights, RowWeights::sample);
  EXPECT_THAT(user_error([&] { load_data("npy:" + xs + "," + ys, 2, true); }),
              HasSubstr("y has 1 target columns, but the spec's targets is 2; set \"targets\" to "
                        "y's columns before the last, each row's weight"));
}

TEST_F(NpySource, BrokenFilesAreNamed) {
  const float x[] = {1, 2, 3, 4};
  const std::string ys = write("y.npy", npy("<f4", "(4,)", x, sizeof x));
  const auto error_of = [&](const std::string& file) {
    return user_error([&] { load_data("npy:" + write("x.npy", file) + "," + ys); });
  };
  EXPECT_THAT(error_of("a,b\n1,2\n"), HasSubstr("x.npy: not a numpy .npy file"));
  EXPECT_THAT(error_of(npy("<c8", "(2, 2)", x, sizeof x)), HasSubstr("is not read"));
  EXPECT_THAT(error_of(npy("<f4", "(4, 2)", x, sizeof x)), HasSubstr("cut short"));
  EXPECT_THAT(error_of(npy("<f4", "(4,)", x, sizeof x)), HasSubstr("shape (rows, features...)"));
  EXPECT_THAT(error_of(npy("<f4", "(3, 1)", x, 12)), HasSubstr("with x's 3 rows"));
  EXPECT_THAT(user_error([&] { load_data("npy:only.npy"); }), HasSubstr("write npy:X.npy,Y.npy"));
  EXPECT_THAT(user_error([&] { load_data("npy:" + path("none.npy") + "," + ys); }),
              HasSubstr("none.npy"));
}

}  // namespace
}  // namespace mf
