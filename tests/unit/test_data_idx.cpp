// load_idx_pair on small IDX files written here, plain and gzip, and on broken ones.
#include <fstream>
#include <iterator>
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
using test::idx_images;
using test::idx_labels;
using test::user_error;
using testing::AllOf;
using testing::HasSubstr;

// IDX files written into a fresh directory per test.
using IdxReader = test::TempDirTest;

// Three 2x2 images and their labels.
const Bytes kPixels = {0, 255, 51, 102, 255, 0, 0, 0, 153, 204, 255, 51};
const Bytes kLabels = {2, 0, 7};

void expect_small_set(const Dataset& d) {
  EXPECT_EQ(d.rows, 3);
  EXPECT_EQ(d.features, 4);
  EXPECT_EQ(d.target_cols, 1);
  EXPECT_EQ(d.classes, 8);  // the largest label is 7
  const std::vector<float> x = {0, 1, 0.2f, 0.4f, 1, 0, 0, 0, 0.6f, 0.8f, 1, 0.2f};
  ASSERT_EQ(d.x.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(d.x[i], x[i]) << "pixel " << i;
  EXPECT_EQ(d.y, (std::vector<float>{2, 0, 7}));
}

TEST_F(IdxReader, ReadsPlainFiles) {
  expect_small_set(load_idx_pair(write("img", idx_images(3, 2, 2, kPixels)),
                                 write("lbl", idx_labels(3, kLabels))));
}

TEST_F(IdxReader, ReadsGzipFiles) {
  expect_small_set(load_idx_pair(write_gz("img.gz", idx_images(3, 2, 2, kPixels)),
                                 write_gz("lbl.gz", idx_labels(3, kLabels))));
}

TEST_F(IdxReader, ReadsNonSquareImages) {
  const Dataset d = load_idx_pair(write("img", idx_images(2, 1, 3, {0, 0, 255, 255, 0, 0})),
                                  write_gz("lbl.gz", idx_labels(2, {0, 0})));
  EXPECT_EQ(d.rows, 2);
  EXPECT_EQ(d.features, 3);
  EXPECT_EQ(d.classes, 1);
  EXPECT_EQ(d.x, (std::vector<float>{0, 0, 1, 1, 0, 0}));
}

TEST_F(IdxReader, MissingFile) {
  const std::string labels = write("lbl", idx_labels(3, kLabels));
  const std::string missing = path("nothing-here");
  EXPECT_THAT(user_error([&] { load_idx_pair(missing, labels); }),
              HasSubstr(missing + ": no such file (the IDX file)"));
}

TEST_F(IdxReader, DirectoryInsteadOfFile) {
  const std::string labels = write("lbl", idx_labels(3, kLabels));
  EXPECT_THAT(user_error([&] { load_idx_pair(dir().string(), labels); }),
              HasSubstr(dir().string() + ": is a folder; the IDX file must be a regular file"));
}

TEST_F(IdxReader, WrongMagicInImageFile) {
  const std::string labels = write("lbl", idx_labels(3, kLabels));
  EXPECT_THAT(user_error([&] { load_idx_pair(labels, labels); }),
              AllOf(HasSubstr(labels + ": wrong magic number 0x00000801"),
                    HasSubstr("an IDX image file starts with 0x00000803")));
}

TEST_F(IdxReader, WrongMagicInLabelFile) {
  const std::string images = write("img", idx_images(3, 2, 2, kPixels));
  EXPECT_THAT(user_error([&] { load_idx_pair(images, images); }),
              AllOf(HasSubstr(images + ": wrong magic number 0x00000803"),
                    HasSubstr("an IDX label file starts with 0x00000801")));
}

TEST_F(IdxReader, TruncatedHeader) {
  const std::string labels = write("lbl", idx_labels(3, kLabels));
  const std::string short_images = write("img7", Bytes{0, 0, 8, 3, 0, 0, 0});
  EXPECT_THAT(user_error([&] { load_idx_pair(short_images, labels); }),
              HasSubstr(short_images + ": truncated header: expected 16 bytes, found 7"));
  const std::string short_labels = write_gz("lbl5.gz", Bytes{0, 0, 8, 1, 0});
  const std::string good_images = write("img-ok", idx_images(3, 2, 2, kPixels));
  EXPECT_THAT(user_error([&] { load_idx_pair(good_images, short_labels); }),
              HasSubstr(short_labels + ": truncated header: expected 8 bytes, found 5"));
}

TEST_F(IdxReader, TruncatedPixels) {
  const Bytes ten_pixels(kPixels.begin(), kPixels.end() - 2);
  const std::string images = write("img", idx_images(3, 2, 2, ten_pixels));
  const std::string labels = write("lbl", idx_labels(3, kLabels));
  EXPECT_THAT(user_error([&] { load_idx_pair(images, labels); }),
              HasSubstr(images + ": truncated data: expected 12 bytes of pixels (3 images of 2x2), "
                                 "found 10"));
}

TEST_F(IdxReader, TruncatedLabels) {
  const std::string images = write_gz("img.gz", idx_images(3, 2, 2, kPixels));
  const std::string labels = write_gz("lbl.gz", idx_labels(3, {2}));
  EXPECT_THAT(user_error([&] { load_idx_pair(images, labels); }),
              HasSubstr(labels + ": truncated data: expected 3 bytes of labels, found 1"));
}

// The gzip form of the small image file, cut by `cut` bytes.
Bytes cut_gzip(const Bytes& gz, size_t cut) { return Bytes(gz.begin(), gz.end() - long(cut)); }

TEST_F(IdxReader, GzipStreamCutShort) {
  const std::string whole = write_gz("whole.gz", idx_images(3, 2, 2, kPixels));
  std::ifstream in(whole, std::ios::binary);
  const Bytes gz((std::istreambuf_iterator<char>(in)), {});
  const std::string labels = write("lbl", idx_labels(3, kLabels));
  // The 8-byte trailer (CRC-32 and size) and some compressed data gone: the pixels are short.
  const std::string cut = write("cut.gz", cut_gzip(gz, 12));
  EXPECT_THAT(user_error([&] { load_idx_pair(cut, labels); }),
              AllOf(HasSubstr(cut + ": truncated data: expected 12 bytes of pixels"),
                    HasSubstr("(the gzip stream ends early)")));
  // Only the trailer gone: every pixel is there, but the file is still incomplete.
  const std::string no_trailer = write("no-trailer.gz", cut_gzip(gz, 8));
  EXPECT_THAT(user_error([&] { load_idx_pair(no_trailer, labels); }),
              HasSubstr(no_trailer + ": the gzip stream ends early, after all 12 bytes of pixels"));
}

TEST_F(IdxReader, CorruptGzipData) {
  const std::string whole = write_gz("whole.gz", idx_images(3, 2, 2, kPixels));
  std::ifstream in(whole, std::ios::binary);
  Bytes gz((std::istreambuf_iterator<char>(in)), {});
  gz[gz.size() - 6] ^= 0xff;  // the CRC-32 of the trailer no longer matches the data
  const std::string bad = write("bad.gz", gz);
  const std::string labels = write("lbl", idx_labels(3, kLabels));
  EXPECT_THAT(user_error([&] { load_idx_pair(bad, labels); }),
              HasSubstr(bad + ": corrupt gzip data"));
}

TEST_F(IdxReader, CountMismatch) {
  const std::string images = write("img", idx_images(3, 2, 2, kPixels));
  const std::string labels = write("lbl", idx_labels(2, {1, 1}));
  EXPECT_THAT(user_error([&] { load_idx_pair(images, labels); }),
              HasSubstr(images + ": 3 images but " + labels + " has 2 labels"));
}

TEST_F(IdxReader, NoImages) {
  const std::string images = write("img", idx_images(0, 28, 28, {}));
  const std::string labels = write("lbl", idx_labels(0, {}));
  EXPECT_THAT(user_error([&] { load_idx_pair(images, labels); }),
              HasSubstr(images + ": holds no images"));
}

TEST_F(IdxReader, EmptyImageDimension) {
  const std::string images = write("img", idx_images(3, 0, 28, {}));
  const std::string labels = write("lbl", idx_labels(3, kLabels));
  EXPECT_THAT(user_error([&] { load_idx_pair(images, labels); }),
              HasSubstr(images + ": images of 0x28 pixels; both dimensions must be positive"));
}

TEST_F(IdxReader, AbsurdHeaderIsRejectedBeforeReading) {
  const std::string images =
      write("img", idx_images(0xffffffffu, 0xffffffffu, 0xffffffffu, {1, 2}));
  const std::string labels = write("lbl", idx_labels(3, kLabels));
  EXPECT_THAT(
      user_error([&] { load_idx_pair(images, labels); }),
      HasSubstr(images + ": header announces 4294967295 images of 4294967295x4294967295 pixels, "
                         "more than the 2147483647 pixels"));
}

TEST_F(IdxReader, LargeHeaderWithoutDataIsTruncated) {
  // 1000000 images of 28x28 are allowed, but only 4 pixels follow: an error, not an allocation of 3
  // GB.
  const std::string images = write_gz("img.gz", idx_images(1000000, 28, 28, {1, 2, 3, 4}));
  const std::string labels = write_gz("lbl.gz", idx_labels(1000000, {}));
  EXPECT_THAT(user_error([&] { load_idx_pair(images, labels); }),
              AllOf(HasSubstr(images + ": truncated data: expected 784000000 bytes"),
                    HasSubstr("found 4")));
}

TEST_F(IdxReader, DataAfterTheAnnouncedImages) {
  Bytes pixels = kPixels;
  pixels.push_back(9);
  const std::string images = write("img", idx_images(3, 2, 2, pixels));
  const std::string labels = write("lbl", idx_labels(3, kLabels));
  EXPECT_THAT(user_error([&] { load_idx_pair(images, labels); }),
              HasSubstr(images + ": data continues after the 12 bytes of pixels"));
}

}  // namespace
}  // namespace mf
