// load_data: each form of source, and the errors for forms it does not know.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "data/dataset.h"
#include "runtime/error.h"
#include "test_support.h"

namespace mf {
namespace {

using test::Bytes;
using test::user_error;
using testing::AllOf;
using testing::HasSubstr;

// An IDX image file of `count` 1x2 images whose pixels are all `pixel`.
Bytes images_file(uint32_t count, unsigned char pixel) {
  return test::idx_images(count, 1, 2, Bytes(size_t(count) * 2, pixel));
}

// An IDX label file of `labels`.
Bytes labels_file(const Bytes& labels) { return test::idx_labels(uint32_t(labels.size()), labels); }

// Data files written into a fresh directory per test.
class DataSource : public test::TempDirTest {
 protected:
  // 3 train images of value 255 with labels 0..2, 2 test images of value 51 with labels 4 and 1,
  // some files plain and some gzip.
  void write_mnist_dir() {
    write_gz("train-images-idx3-ubyte.gz", images_file(3, 255));
    write("train-labels-idx1-ubyte", labels_file({0, 1, 2}));
    write("t10k-images-idx3-ubyte", images_file(2, 51));
    write_gz("t10k-labels-idx1-ubyte.gz", labels_file({4, 1}));
  }
};

TEST_F(DataSource, Synthetic) {
  const DataSplit s = load_data("synthetic:binary:rows=8,features=2");
  EXPECT_EQ(s.description, "synthetic:binary:rows=8,features=2,seed=1234 (8 train, 2 test)");
  EXPECT_EQ(s.train.x, make_synthetic("binary:rows=8,features=2").train.x);
  EXPECT_EQ(s.test->rows, 2);
  EXPECT_THAT(user_error([] { load_data("synthetic:moons"); }), HasSubstr("unknown kind 'moons'"));
}

TEST_F(DataSource, CsvTrainOnly) {
  const std::string train = write("train.csv", "x1,x2,y\n1,2,0\n3,4,1\n");
  const DataSplit s = load_data("csv:" + train);
  EXPECT_EQ(s.description, "csv:" + train + " (2 train, no test set)");
  EXPECT_EQ(s.train.x, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(s.train.classes, 2);
  EXPECT_FALSE(s.test);
}

// Each file keeps its own labels' class count and where its largest label is, so that a label that
// does not fit the model is reported in the file that holds it.
TEST_F(DataSource, CsvTrainAndTestKeepTheirOwnLabels) {
  const std::string train = write("train.csv", "1,2,0\n3,4,1\n");
  const std::string test = write("test.csv", "5,6,2\n");
  const DataSplit s = load_data("csv:" + train + "," + test);
  EXPECT_EQ(s.description, "csv:" + train + "," + test + " (2 train, 1 test)");
  ASSERT_TRUE(s.test);
  EXPECT_EQ(s.test->x, (std::vector<float>{5, 6}));
  EXPECT_EQ(s.test->y, (std::vector<float>{2}));
  EXPECT_EQ(s.train.classes, 2);
  EXPECT_EQ(s.test->classes, 3);
  EXPECT_EQ(s.train.label_at, train + ":2: label 1");
  EXPECT_EQ(s.test->label_at, test + ":1: label 2");
}

TEST_F(DataSource, CsvLabelThatIsNotAClassIsLocated) {
  const std::string train = write("train.csv", "x,y,label\n1,2,0\n3,4,1\n5,6,-1\n7,8,1.5\n");
  const std::string test = write("test.csv", "5,6,0.5\n");
  const DataSplit s = load_data("csv:" + train + "," + test);
  EXPECT_EQ(s.train.classes, 0);
  // the first one, on its line (after the header)
  EXPECT_EQ(s.train.label_at, train + ":4: label -1");
  EXPECT_EQ(s.test->classes, 0);
  EXPECT_EQ(s.test->label_at, test + ":1: label 0.5");
}

TEST_F(DataSource, CsvTestWithOtherFeatures) {
  const std::string train = write("train.csv", "1,2,0\n");
  const std::string test = write("test.csv", "1,2,3,0\n");
  EXPECT_THAT(user_error([&] { load_data("csv:" + train + "," + test); }),
              HasSubstr(test + ": 3 features per row, but " + train + " has 2"));
}

TEST_F(DataSource, CsvBadForms) {
  for (const std::string source : {"csv:", "csv:a.csv,", "csv:,b.csv", "csv:a.csv,b.csv,c.csv"})
    EXPECT_THAT(user_error([&] { load_data(source); }),
                HasSubstr("data source '" + source +
                          "': not a train file and an optional test file; "
                          "write csv:TRAIN"));
  const std::string missing = path("missing.csv");
  EXPECT_THAT(user_error([&] { load_data("csv:" + missing); }),
              HasSubstr(missing + ": no such file"));
}

TEST_F(DataSource, MnistDirectoryWithPlainAndGzipFiles) {
  write_mnist_dir();
  const std::string source = "mnist:" + dir().string();
  const DataSplit s = load_data(source);
  EXPECT_EQ(s.description, source + " (3 train, 2 test)");
  EXPECT_EQ(s.train.rows, 3);
  EXPECT_EQ(s.train.features, 2);
  EXPECT_EQ(s.train.x, std::vector<float>(6, 1.0f));
  EXPECT_EQ(s.train.y, (std::vector<float>{0, 1, 2}));
  ASSERT_TRUE(s.test);
  EXPECT_EQ(s.test->rows, 2);
  for (float pixel : s.test->x) EXPECT_FLOAT_EQ(pixel, 0.2f);
  EXPECT_EQ(s.test->y, (std::vector<float>{4, 1}));
  EXPECT_EQ(s.train.classes, 3);
  EXPECT_EQ(s.test->classes, 5);
  EXPECT_THAT(s.test->label_at, HasSubstr("t10k-labels-idx1-ubyte.gz record 0: label 4"));
}

// The bytes of x and y a split holds, as floats.
size_t split_bytes(const DataSplit& s) {
  size_t values = s.train.x.size() + s.train.y.size();
  if (s.test) values += s.test->x.size() + s.test->y.size();
  return values * sizeof(float);
}

// data_bytes_bound never says less than loading gives: exactly for synthetic data, 4 bytes a file
// byte for plain files; where only reading tells (a compressed or missing file, a source that is
// refused), it says nothing.
TEST_F(DataSource, TheBoundOfADataSetHoldsWhatLoadingGives) {
  for (const std::string source :
       {"synthetic:teacher:rows=1024", "synthetic:binary:rows=7,features=3"})
    EXPECT_EQ(data_bytes_bound(source), split_bytes(load_data(source))) << source;
  const std::string train = write("train.csv", "x1,x2,y\n1,2,0\n3.25,4,1\n"),
                    test = write("test.csv", "5,6,1\n");
  const std::string csv = "csv:" + train + "," + test;
  EXPECT_EQ(data_bytes_bound(csv),
            4 * (std::filesystem::file_size(train) + std::filesystem::file_size(test)));
  EXPECT_GE(*data_bytes_bound(csv), split_bytes(load_data(csv)));
  write("train-images-idx3-ubyte", images_file(3, 255));
  write("train-labels-idx1-ubyte", labels_file({0, 1, 2}));
  write("t10k-images-idx3-ubyte", images_file(2, 51));
  EXPECT_EQ(data_bytes_bound("mnist:" + dir().string()), std::nullopt) << "a file missing";
  write("t10k-labels-idx1-ubyte", labels_file({4, 1}));
  ASSERT_TRUE(data_bytes_bound("mnist:" + dir().string()));
  EXPECT_GE(*data_bytes_bound("mnist:" + dir().string()),
            split_bytes(load_data("mnist:" + dir().string())));
  std::filesystem::remove(path("t10k-labels-idx1-ubyte"));
  write_gz("t10k-labels-idx1-ubyte.gz", labels_file({4, 1}));
  EXPECT_EQ(data_bytes_bound("mnist:" + dir().string()), std::nullopt) << "compressed";
  for (const std::string& source : {std::string("synthetic:moons"), "csv:" + path("missing.csv"),
                                    std::string("csv:"), std::string("iris")})
    EXPECT_EQ(data_bytes_bound(source), std::nullopt) << source;
}

TEST_F(DataSource, MnistDirectoryMissingAFile) {
  write_mnist_dir();
  const std::string expected = path("train-labels-idx1-ubyte");
  std::filesystem::remove(expected);
  EXPECT_THAT(user_error([&] { load_data("mnist:" + dir().string()); }),
              AllOf(HasSubstr(expected + ": not found, nor train-labels-idx1-ubyte.gz"),
                    HasSubstr("each plain or .gz")));
}

TEST_F(DataSource, MnistDirectoryWithABrokenFile) {
  write_mnist_dir();
  const std::string broken = write("t10k-images-idx3-ubyte", labels_file({1, 2}));
  EXPECT_THAT(user_error([&] { load_data("mnist:" + dir().string()); }),
              HasSubstr(broken + ": wrong magic number 0x00000801"));
}

TEST_F(DataSource, MnistWithoutADirectory) {
  EXPECT_THAT(user_error([] { load_data("mnist:"); }),
              HasSubstr("data source 'mnist:': no directory given; write mnist:DIR"));
  const std::string missing = path("nowhere");
  EXPECT_THAT(user_error([&] { load_data("mnist:" + missing); }),
              HasSubstr(missing + ": not a directory"));
}

TEST_F(DataSource, UnknownSource) {
  for (const std::string source : {"imagenet", "", "synthetic", "Fashion-MNIST", "csv"})
    EXPECT_THAT(user_error([&] { load_data(source); }),
                AllOf(HasSubstr("data source '" + source + "': unknown"),
                      HasSubstr("fashion-mnist, mnist:DIR, csv:TRAIN[,TEST], npy:X,Y[,XTEST,YTEST] "
                                "or synthetic:KIND")));
}

// Sets an environment variable for one test and restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST_F(DataSource, FashionMnistIsReadFromMultifitDataWhenSet) {
  std::filesystem::create_directory(path("fashion-mnist"));
  write_gz("fashion-mnist/train-images-idx3-ubyte.gz", images_file(3, 255));
  write("fashion-mnist/train-labels-idx1-ubyte", labels_file({0, 1, 2}));
  write("fashion-mnist/t10k-images-idx3-ubyte", images_file(2, 51));
  write("fashion-mnist/t10k-labels-idx1-ubyte", labels_file({4, 1}));
  {
    ScopedEnv data("MULTIFIT_DATA", dir().string());
    EXPECT_EQ(fashion_mnist_dir(), path("fashion-mnist"));
    const DataSplit s = load_data("fashion-mnist");
    EXPECT_EQ(s.description, "fashion-mnist (3 train, 2 test)");
    EXPECT_EQ(s.train.y, (std::vector<float>{0, 1, 2}));
  }
  ScopedEnv elsewhere("MULTIFIT_DATA", path("nowhere"));
  EXPECT_THAT(
      user_error([] { load_data("fashion-mnist"); }),
      AllOf(HasSubstr(path("nowhere/fashion-mnist") + " not found"), HasSubstr("MULTIFIT_DATA=")));
}

TEST_F(DataSource, FashionMnistWithoutMultifitDataIsTheDebianPackage) {
  ScopedEnv unset("MULTIFIT_DATA", "");
  EXPECT_EQ(fashion_mnist_dir(), "/usr/share/datasets/fashion-mnist");
}

TEST_F(DataSource, FashionMnist) {
  if (!std::filesystem::is_directory(fashion_mnist_dir()))
    GTEST_SKIP() << fashion_mnist_dir()
                 << " is absent; the package dataset-fashion-mnist provides it";
  const DataSplit s = load_data("fashion-mnist");
  EXPECT_EQ(s.description, "fashion-mnist (60000 train, 10000 test)");
  EXPECT_EQ(s.train.rows, 60000);
  EXPECT_EQ(s.train.features, 784);
  EXPECT_EQ(s.train.x.size(), 60000u * 784);
  EXPECT_EQ(s.train.classes, 10);
  ASSERT_TRUE(s.test);
  EXPECT_EQ(s.test->rows, 10000);
  EXPECT_EQ(s.test->features, 784);
  EXPECT_EQ(s.test->classes, 10);
  for (const Dataset* d : {&s.train, &*s.test}) {
    const auto [min, max] = std::minmax_element(d->x.begin(), d->x.end());
    EXPECT_EQ(*min, 0.0f);
    EXPECT_EQ(*max, 1.0f);
    // Fashion-MNIST is balanced: 6000 train and 1000 test images per class.
    for (float label = 0; label < 10; ++label)
      EXPECT_EQ(std::count(d->y.begin(), d->y.end(), label), d->rows / 10) << "label " << label;
  }
}

}  // namespace
}  // namespace mf
