// load_csv on small CSV files written here, good and broken.
#include <algorithm>
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
using testing::AllOf;
using testing::HasSubstr;

// CSV files written into a fresh directory per test.
class CsvReader : public test::TempDirTest {
 protected:
  using TempDirTest::write;
  // Writes `text` as data.csv; returns its path.
  std::string write(const std::string& text) { return write("data.csv", text); }

  // The message of the UserError that loading `text` throws, after the file name it must start
  // with.
  std::string error_for(const std::string& text) {
    const std::string file = write(text);
    const std::string message = user_error([&] { load_csv(file); });
    EXPECT_TRUE(message.starts_with(file + ":")) << message;
    return message.substr(std::min(file.size(), message.size()));
  }
};

TEST_F(CsvReader, ReadsFeaturesThenLabel) {
  const Dataset d = load_csv(write("1,2.5,0\n-3,4e-1,2\n0.125,7,1\n"));
  EXPECT_EQ(d.rows, 3);
  EXPECT_EQ(d.features, 2);
  EXPECT_EQ(d.target_cols, 1);
  EXPECT_EQ(d.classes, 3);
  EXPECT_EQ(d.x, (std::vector<float>{1, 2.5f, -3, 0.4f, 0.125f, 7}));
  EXPECT_EQ(d.y, (std::vector<float>{0, 2, 1}));
}

TEST_F(CsvReader, LastLineWithoutNewline) {
  const Dataset d = load_csv(write("1,2,3\n4,5,6"));
  EXPECT_EQ(d.rows, 2);
  EXPECT_EQ(d.x, (std::vector<float>{1, 2, 4, 5}));
  EXPECT_EQ(d.y, (std::vector<float>{3, 6}));
  EXPECT_EQ(d.classes, 7);
}

TEST_F(CsvReader, SkipsAllTextHeader) {
  const Dataset d = load_csv(write("width,height,label\n1,2,1\n3,4,0\n"));
  EXPECT_EQ(d.rows, 2);
  EXPECT_EQ(d.features, 2);
  EXPECT_EQ(d.x, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(d.y, (std::vector<float>{1, 0}));
}

TEST_F(CsvReader, HeaderWithANumberIsData) {
  EXPECT_THAT(error_for("width,2,label\n1,2,1\n"),
              HasSubstr(":1: column 1: 'width' is not a number"));
}

TEST_F(CsvReader, AcceptsSpacesCrlfPlusSignAndTrailingBlankLines) {
  const Dataset d = load_csv(write(" 1 , +2 ,1\r\n3,\t4,0\r\n\r\n  \n\n"));
  EXPECT_EQ(d.rows, 2);
  EXPECT_EQ(d.x, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(d.y, (std::vector<float>{1, 0}));
}

TEST_F(CsvReader, FractionalOrNegativeLabelsMeanRegression) {
  EXPECT_EQ(load_csv(write("1,0.5\n2,1\n")).classes, 0);
  EXPECT_EQ(load_csv(write("1,-1\n2,1\n")).classes, 0);
  EXPECT_EQ(load_csv(write("1,1e9\n2,1\n")).classes, 0);  // beyond the exact float integers
  const Dataset d = load_csv(write("1,0.5\n2,1.5\n"));
  EXPECT_EQ(d.y, (std::vector<float>{0.5f, 1.5f}));
}

TEST_F(CsvReader, TinyValuesRoundToZero) {
  const Dataset d = load_csv(write("1e-50,3e38,0\n"));
  EXPECT_EQ(d.x, (std::vector<float>{0, 3e38f}));
}

TEST_F(CsvReader, IntegerLabelsWrittenAsFloatsAreClasses) {
  EXPECT_EQ(load_csv(write("1,4.0\n2,0\n")).classes, 5);
}

TEST_F(CsvReader, BlankLineInsideTheData) {
  EXPECT_THAT(error_for("1,2,1\n\n3,4,0\n"), HasSubstr(":2: blank line inside the data"));
  EXPECT_THAT(error_for("\n1,2,1\n"), HasSubstr(":1: blank line inside the data"));
}

TEST_F(CsvReader, NonNumericCell) {
  EXPECT_THAT(error_for("a,b,c\n1,2,1\n3,x4,0\n"),
              HasSubstr(":3: column 2: 'x4' is not a number; cells hold decimal numbers"));
  EXPECT_THAT(error_for("1,2,1\n3,4,zero\n"), HasSubstr(":2: column 3: 'zero' is not a number"));
  EXPECT_THAT(error_for("1,,1\n"), HasSubstr(":1: column 2: '' is not a number"));
  EXPECT_THAT(error_for("1,0x10,1\n"), HasSubstr(":1: column 2: '0x10' is not a number"));
  EXPECT_THAT(error_for("1,2 3,1\n"), HasSubstr(":1: column 2: '2 3' is not a number"));
}

TEST_F(CsvReader, NotFiniteValues) {
  EXPECT_THAT(error_for("1,nan,1\n"),
              HasSubstr(":1: column 2: 'nan' is not a finite float; NaN, infinity"));
  EXPECT_THAT(error_for("1,2,1\n-inf,2,1\n"),
              HasSubstr(":2: column 1: '-inf' is not a finite float"));
  EXPECT_THAT(error_for("1,2,1e39\n"), HasSubstr(":1: column 3: '1e39' is not a finite float"));
  EXPECT_THAT(error_for("1,2,-1e999\n"), HasSubstr(":1: column 3: '-1e999' is not a finite float"));
}

TEST_F(CsvReader, InconsistentColumnCount) {
  EXPECT_THAT(error_for("1,2,1\n3,4,0\n5,0\n"),
              HasSubstr(":3: 2 columns, expected 3 as in line 1"));
  EXPECT_THAT(error_for("a,b\n1,2,3\n"), HasSubstr(":2: 3 columns, expected 2 as in line 1"));
}

TEST_F(CsvReader, NeedsAFeatureAndALabel) {
  EXPECT_THAT(error_for("5\n6\n"),
              HasSubstr(":1: 1 column(s); a line needs at least one feature column"));
}

// targets > 1: the last columns of a row are its targets (multi-output mse, multi-label binary
// labels).
TEST_F(CsvReader, SeveralTargetColumns) {
  const Dataset d = load_csv(write("a,b,y1,y2\n1,2,0,1\n3,4,1,1\n"), 2);
  EXPECT_EQ(d.features, 2);
  EXPECT_EQ(d.target_cols, 2);
  EXPECT_EQ(d.x, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(d.y, (std::vector<float>{0, 1, 1, 1}));
  EXPECT_EQ(d.classes, 2);  // every target is 0 or 1: binary labels
  EXPECT_THAT(
      user_error([&] { load_csv(write("1,2\n"), 2); }),
      HasSubstr(
          ":1: 2 column(s); a line needs at least one feature column and then 2 target columns"));
}

TEST_F(CsvReader, NoDataRows) {
  EXPECT_THAT(error_for(""), HasSubstr(": no data rows"));
  EXPECT_THAT(error_for("x,label\n\n"), HasSubstr(": no data rows"));
}

TEST_F(CsvReader, MissingFileOrDirectory) {
  const std::string missing = path("absent.csv");
  EXPECT_THAT(user_error([&] { load_csv(missing); }),
              HasSubstr(missing + ": no such file (the CSV file)"));
  EXPECT_THAT(user_error([&] { load_csv(dir().string()); }),
              HasSubstr(dir().string() + ": is a folder; the CSV file must be a regular file"));
}

}  // namespace
}  // namespace mf
