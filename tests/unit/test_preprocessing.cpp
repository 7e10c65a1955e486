// Preprocessing (data/preprocessing.h): each operation against hand-computed images, the statistics
// of the random ones, the determinism of every draw, and the spec's errors.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "data/preprocessing.h"
#include "runtime/error.h"
#include "runtime/rng.h"
#include "test_support.h"

namespace mf {
namespace {

using nlohmann::json;
using testing::AllOf;
using testing::ElementsAreArray;
using testing::HasSubstr;
using testing::Not;

using Image = std::vector<float>;

constexpr ImageShape k4x5{4, 5, 1};

Preprocessing parse(const std::string& list, std::optional<ImageShape> shape, int64_t input) {
  return Preprocessing::parse(json::parse(list), shape, input, "spec.json");
}
Preprocessing for_image(const std::string& list, ImageShape shape = k4x5) {
  return parse(list, shape, shape.values());
}

// The rows after `p`, applied out of place as one batch.
Image applied(const Preprocessing& p, const Image& rows, int64_t width, uint64_t seed = 1,
              int epoch = 0, int64_t first_position = 0) {
  Image out(rows.size());
  p.apply(rows.data(), out.data(), int64_t(rows.size()) / width, width, seed, epoch,
          first_position);
  return out;
}
Image applied(const Preprocessing& p, const Image& image) {
  return applied(p, image, int64_t(image.size()));
}

// The 4x5x1 image whose pixel (y, x) is 10y + x: every value says where it came from.
Image ramp() {
  Image image;
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 5; ++x) image.push_back(float(10 * y + x));
  return image;
}

Image random_values(int64_t n, uint64_t seed) {
  Rng rng(seed);
  Image values(static_cast<size_t>(n));
  for (float& v : values) v = rng.uniform(0, 1);
  return values;
}

// The message of the UserError that parsing `list` throws.
std::string parse_error(const std::string& list, std::optional<ImageShape> shape = k4x5,
                        int64_t input = 20) {
  SCOPED_TRACE("list " + list);
  return test::user_error([&] { parse(list, shape, input); });
}

// ---- RandomTranslation -------------------------------------------------------------------------

// A fixed shift: a pair [f, f] draws f. 0.2 of 5 columns is 1 pixel right, -0.25 of 4 rows 1 pixel
// up.
std::string one_pixel_right_and_up(const std::string& fill) {
  return R"([{"type": "RandomTranslation", "height_factor": [-0.25, -0.25], "width_factor": [0.2, 0.2], )" +
         fill + "}]";
}

TEST(Preprocessing, TranslationByOnePixelFillsWithTheConstant) {
  const Image out = applied(
      for_image(one_pixel_right_and_up(R"("fill_mode": "constant", "fill_value": -1)")), ramp());
  EXPECT_THAT(out, ElementsAreArray<float>({-1, 10, 11, 12, 13,  //
                                            -1, 20, 21, 22, 23,  //
                                            -1, 30, 31, 32, 33,  //
                                            -1, -1, -1, -1, -1}));
}

TEST(Preprocessing, TranslationByOnePixelReflectsAboutTheEdge) {
  const Image out = applied(for_image(one_pixel_right_and_up(R"("fill_mode": "reflect")")), ramp());
  EXPECT_THAT(out, ElementsAreArray<float>({10, 10, 11, 12, 13,  //
                                            20, 20, 21, 22, 23,  //
                                            30, 30, 31, 32, 33,  //
                                            30, 30, 31, 32, 33}));
}

TEST(Preprocessing, TranslationByOnePixelRepeatsTheNearestPixel) {
  const Image out = applied(for_image(one_pixel_right_and_up(R"("fill_mode": "nearest")")), ramp());
  EXPECT_THAT(out, ElementsAreArray<float>({10, 10, 11, 12, 13,  //
                                            20, 20, 21, 22, 23,  //
                                            30, 30, 31, 32, 33,  //
                                            30, 30, 31, 32, 33}));
}

TEST(Preprocessing, TranslationByTwoPixelsTellsTheFillModesApart) {
  // Keras/TF reflect is d c b a | a b c d: the first pixel past the edge is the edge pixel itself.
  const auto first_row = [](const std::string& fill) {
    const Image out = applied(
        for_image(
            R"([{"type": "RandomTranslation", "height_factor": 0, "width_factor": [0.4, 0.4], )" +
            fill + "}]"),
        ramp());
    return Image(out.begin(), out.begin() + 5);
  };
  EXPECT_THAT(first_row(R"("fill_mode": "reflect")"), ElementsAreArray<float>({1, 0, 0, 1, 2}));
  EXPECT_THAT(first_row(R"("fill_mode": "nearest")"), ElementsAreArray<float>({0, 0, 0, 1, 2}));
  EXPECT_THAT(first_row(R"("fill_mode": "wrap")"), ElementsAreArray<float>({3, 4, 0, 1, 2}));
  EXPECT_THAT(first_row(R"("fill_mode": "constant", "fill_value": 7)"),
              ElementsAreArray<float>({7, 7, 0, 1, 2}));
}

TEST(Preprocessing, FractionalTranslationInterpolatesBilinearly) {
  // Half a pixel down (0.125 of 4 rows) and a quarter right (0.05 of 5 columns): output (y, x)
  // reads (y - 0.5, x - 0.25), between rows y-1 and y (weights 1/2, 1/2) and columns x-1 and x
  // (1/4, 3/4).
  const std::string list = R"([{"type": "RandomTranslation", "height_factor": [0.125, 0.125],
                                "width_factor": [0.05, 0.05], "fill_mode": "constant", "fill_value": -1}])";
  const Image out = applied(for_image(list), ramp());
  // Inside: 1/2 (1/4 * 12 + 3/4 * 13) + 1/2 (1/4 * 22 + 3/4 * 23).
  EXPECT_FLOAT_EQ(out[2 * 5 + 3], 17.75f);
  // Row -1 is the fill: 1/2 * -1 + 1/2 (1/4 * 0 + 3/4 * 1).
  EXPECT_FLOAT_EQ(out[0 * 5 + 1], -0.125f);
  // Three of the four taps are the fill: (1/8 + 3/8 + 1/8) * -1 + 3/8 * 0.
  EXPECT_FLOAT_EQ(out[0], -0.625f);
  // Reflected, row -1 is row 0: 1/4 * 0 + 3/4 * 1.
  const Image reflected =
      applied(for_image(R"([{"type": "RandomTranslation", "height_factor": [0.125, 0.125],
                                                 "width_factor": [0.05, 0.05]}])"),
              ramp());
  EXPECT_FLOAT_EQ(reflected[1], 0.75f);
}

TEST(Preprocessing, NearestInterpolationTakesTheClosestPixel) {
  // 0.75 of a pixel down (0.1875 of 4 rows): row y reads y - 0.75, whose nearest pixel is row y
  // - 1.
  const Image out =
      applied(for_image(R"([{"type": "RandomTranslation", "height_factor": [0.1875, 0.1875],
                                          "width_factor": 0, "interpolation": "nearest",
                                          "fill_mode": "constant", "fill_value": -1}])"),
              ramp());
  EXPECT_THAT(out, ElementsAreArray<float>({-1, -1, -1, -1, -1,  //
                                            0,  1,  2,  3,  4,   //
                                            10, 11, 12, 13, 14,  //
                                            20, 21, 22, 23, 24}));
  // A quarter of a pixel (0.0625 of 4 rows) rounds back to the pixel itself.
  const Image quarter =
      applied(for_image(R"([{"type": "RandomTranslation", "height_factor": [0.0625, 0.0625],
                                              "width_factor": 0, "interpolation": "nearest"}])"),
              ramp());
  EXPECT_EQ(quarter, ramp());
}

// ---- RandomFlip --------------------------------------------------------------------------------

// 3x4x2: value (y, x, c) = 10y + x + 100c.
constexpr ImageShape k3x4x2{3, 4, 2};
const Image kTwoChannels = {0,  100, 1,  101, 2,  102, 3,  103,  //
                            10, 110, 11, 111, 12, 112, 13, 113,  //
                            20, 120, 21, 121, 22, 122, 23, 123};
const Image kFlippedLeftRight = {3,  103, 2,  102, 1,  101, 0,  100,  //
                                 13, 113, 12, 112, 11, 111, 10, 110,  //
                                 23, 123, 22, 122, 21, 121, 20, 120};
const Image kFlippedUpDown = {20, 120, 21, 121, 22, 122, 23, 123,  //
                              10, 110, 11, 111, 12, 112, 13, 113,  //
                              0,  100, 1,  101, 2,  102, 3,  103};
const Image kFlippedBoth = {23, 123, 22, 122, 21, 121, 20, 120,  //
                            13, 113, 12, 112, 11, 111, 10, 110,  //
                            3,  103, 2,  102, 1,  101, 0,  100};

// How often each of `expected` came out of `mode` over 64 samples; a test failure for any other
// image.
std::vector<int> flip_outcomes(const std::string& mode, const std::vector<Image>& expected) {
  const Preprocessing flip =
      for_image(R"([{"type": "RandomFlip", "mode": ")" + mode + R"("}])", k3x4x2);
  std::vector<int> counts(expected.size());
  for (int position = 0; position < 64; ++position) {
    const Image out = applied(flip, kTwoChannels, 24, 1, 0, position);
    const auto it = std::find(expected.begin(), expected.end(), out);
    if (it == expected.end())
      ADD_FAILURE() << mode << ": position " << position << " is no expected image";
    else
      ++counts[size_t(it - expected.begin())];
  }
  return counts;
}

TEST(Preprocessing, HorizontalFlipReversesTheColumns) {
  EXPECT_THAT(flip_outcomes("horizontal", {kTwoChannels, kFlippedLeftRight}),
              testing::Each(testing::Gt(0)));
}

TEST(Preprocessing, VerticalFlipReversesTheRows) {
  EXPECT_THAT(flip_outcomes("vertical", {kTwoChannels, kFlippedUpDown}),
              testing::Each(testing::Gt(0)));
}

TEST(Preprocessing, HorizontalAndVerticalGivesAllFourOrientations) {
  EXPECT_THAT(flip_outcomes("horizontal_and_vertical",
                            {kTwoChannels, kFlippedLeftRight, kFlippedUpDown, kFlippedBoth}),
              testing::Each(testing::Gt(0)));
}

TEST(Preprocessing, EachFlipHappensToHalfTheSamplesIndependently) {
  // 2x2: the first value after the flips says which happened (0 none, 1 left-right, 2 up-down, 3
  // both).
  constexpr int kSamples = 4000;
  const Preprocessing flip = for_image(R"([{"type": "RandomFlip"}])", {2, 2, 1});
  Image rows;
  for (int i = 0; i < kSamples; ++i) rows.insert(rows.end(), {0, 1, 2, 3});
  const Image out = applied(flip, rows, 4, 7, 3, 0);
  int counts[4] = {};
  for (int i = 0; i < kSamples; ++i) ++counts[int(out[size_t(4 * i)])];
  // Binomial bounds of 5 standard deviations: sqrt(4000 / 4) = 32 for 1/2, sqrt(4000 * 3/16) = 27
  // for 1/4.
  EXPECT_NEAR(counts[1] + counts[3], kSamples / 2, 160);
  EXPECT_NEAR(counts[2] + counts[3], kSamples / 2, 160);
  EXPECT_NEAR(counts[3], kSamples / 4, 137);  // both at once: independent draws, not one for both
}

// ---- RandomZoom --------------------------------------------------------------------------------

TEST(Preprocessing, ZoomInByHalfReadsTheCentre) {
  // z = 1 - 0.5 on both axes (width_factor null: the height's draw): x reads 0.5x + (5-1)/2 * 0.5 =
  // 0.5x + 1, y reads 0.5y + 0.75; the ramp is linear, so bilinear interpolation gives 10 sy + sx.
  const Image out =
      applied(for_image(R"([{"type": "RandomZoom", "height_factor": [-0.5, -0.5]}])"), ramp());
  EXPECT_THAT(out, ElementsAreArray<float>({8.5,  9,  9.5,  10, 10.5,  //
                                            13.5, 14, 14.5, 15, 15.5,  //
                                            18.5, 19, 19.5, 20, 20.5,  //
                                            23.5, 24, 24.5, 25, 25.5}));
}

TEST(Preprocessing, ZoomOutOfTheWidthAloneFillsTheSides) {
  // z = 1.5 across, 1 down: x reads 1.5x - 1, so columns 0 and 4 read -1 and 5, outside.
  const Image out =
      applied(for_image(R"([{"type": "RandomZoom", "height_factor": 0, "width_factor": [0.5, 0.5],
                                          "fill_mode": "constant", "fill_value": -1}])"),
              ramp());
  EXPECT_THAT(out, ElementsAreArray<float>({-1, 0.5,  2,  3.5,  -1,  //
                                            -1, 10.5, 12, 13.5, -1,  //
                                            -1, 20.5, 22, 23.5, -1,  //
                                            -1, 30.5, 32, 33.5, -1}));
}

TEST(Preprocessing, ZoomOfFactorZeroIsTheIdentity) {
  const Image image = random_values(20, 3);
  EXPECT_EQ(applied(for_image(R"([{"type": "RandomZoom", "height_factor": 0}])"), image), image);
  EXPECT_EQ(
      applied(
          for_image(R"([{"type": "RandomTranslation", "height_factor": 0, "width_factor": 0}])"),
          image),
      image);
}

// ---- GaussianNoise -----------------------------------------------------------------------------

TEST(Preprocessing, GaussianNoiseHasTheMeanAndDeviationAsked) {
  constexpr int64_t kWidth = 1000, kRows = 400, kValues = kWidth * kRows;
  const Preprocessing noise =
      parse(R"([{"type": "GaussianNoise", "stddev": 0.5}])", std::nullopt, kWidth);
  const Image out = applied(noise, Image(kValues, 2.f), kWidth);
  double sum = 0, squares = 0;
  int64_t within_one = 0;
  for (float v : out) {
    sum += v - 2;
    squares += (v - 2) * (v - 2);
    within_one += std::abs(v - 2) < 0.5;
  }
  const double mean = sum / kValues, deviation = std::sqrt(squares / kValues - mean * mean);
  // Bounds of 5 standard errors: 0.5 / sqrt(n) for the mean, 0.5 / sqrt(2n) for the deviation.
  EXPECT_NEAR(mean, 0, 5 * 0.5 / std::sqrt(double(kValues)));
  EXPECT_NEAR(deviation, 0.5, 5 * 0.5 / std::sqrt(2.0 * kValues));
  // Normal, not merely of that deviation: 68.27% within one deviation (a uniform would have 57.7%).
  EXPECT_NEAR(double(within_one) / kValues, 0.6827, 0.004);
  // Each sample draws its own noise.
  EXPECT_NE(Image(out.begin(), out.begin() + kWidth),
            Image(out.begin() + kWidth, out.begin() + 2 * kWidth));
}

// ---- RandomContrast ----------------------------------------------------------------------------

TEST(Preprocessing, ContrastScalesAboutEachChannelsMeanAndClips) {
  // [-0.5, 0.5] draws from [1.5, 1.5]. Channel 0 (mean 25) and channel 1 (mean 145) of 2x2 pixels.
  const Image image = {10, 100, 20, 200, 30, 250, 40, 30};
  const Image out = applied(
      for_image(R"([{"type": "RandomContrast", "factor": [-0.5, 0.5]}])", {2, 2, 2}), image);
  // (x - m) * 1.5 + m, clipped to [0, 255]: 302.5 and -27.5 are clipped.
  EXPECT_THAT(out, ElementsAreArray<float>({2.5, 77.5, 17.5, 227.5, 32.5, 255, 47.5, 0}));
  // Mean 0.5: 0.1 and 0.9 become -0.1 and 1.1, clipped to the value_range [0, 1].
  const Image unit = applied(
      for_image(R"([{"type": "RandomContrast", "factor": [-0.5, 0.5], "value_range": [0, 1]}])",
                {1, 2, 1}),
      Image{0.1f, 0.9f});
  EXPECT_THAT(unit, ElementsAreArray<float>({0, 1}));
}

TEST(Preprocessing, ContrastOfOneNumberDrawsBothSidesOfOne) {
  // A factor of 0.5 draws from [0.5, 1.5] (Keras's documented range); the contrast of each sample
  // is what it did to the distance from the mean.
  const Preprocessing contrast =
      for_image(R"([{"type": "RandomContrast", "factor": 0.5}])", {1, 2, 1});
  float low = 2, high = 0;
  for (int position = 0; position < 200; ++position) {
    const Image out = applied(contrast, Image{100, 110}, 2, 1, 0, position);
    const float c = (out[1] - out[0]) / 10;
    low = std::min(low, c);
    high = std::max(high, c);
  }
  EXPECT_GE(low, 0.5f - 1e-5f);
  EXPECT_LT(low, 0.6f);
  EXPECT_GT(high, 1.4f);
  EXPECT_LE(high, 1.5f + 1e-5f);
}

// ---- HostWork ----------------------------------------------------------------------------------

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

TEST(Preprocessing, HostWorkTakesTheCpuTimeAskedAndChangesNothing) {
  constexpr int64_t kWidth = 784, kRows = 10;
  const Preprocessing work =
      parse(R"([{"type": "HostWork", "microseconds_per_sample": 2000}])", std::nullopt, kWidth);
  const Image rows = random_values(kWidth * kRows, 5);
  Image out(rows.size());
  const double start = thread_cpu_seconds();
  work.apply(rows.data(), out.data(), kRows, kWidth, 1, 0, 0);
  const double spent = thread_cpu_seconds() - start;
  EXPECT_GE(spent, kRows * 2000e-6);
  EXPECT_LT(spent, 2 * kRows * 2000e-6);  // per sample, not per value or per batch squared
  EXPECT_EQ(out, rows);
  Image in_place = rows;
  work.apply(in_place.data(), in_place.data(), kRows, kWidth, 1, 0, 0);
  EXPECT_EQ(in_place, rows);
}

// ---- Determinism -------------------------------------------------------------------------------

const char kEveryRandomOperation[] = R"([
  {"type": "RandomFlip"},
  {"type": "RandomTranslation", "height_factor": 0.3, "width_factor": 0.3},
  {"type": "RandomZoom", "height_factor": 0.3, "width_factor": [-0.2, 0.4], "fill_mode": "constant"},
  {"type": "RandomContrast", "factor": 0.4, "value_range": [0, 1]},
  {"type": "GaussianNoise", "stddev": 0.1}])";

TEST(Preprocessing, EachSampleDependsOnlyOnSeedEpochAndPosition) {
  constexpr int64_t kRows = 16, kWidth = 20, kFirst = 100;
  const Preprocessing p = for_image(kEveryRandomOperation);
  const Image rows = random_values(kRows * kWidth, 11);
  const Image batch = applied(p, rows, kWidth, 42, 3, kFirst);
  ASSERT_NE(batch, rows);

  const auto one = [&](Image& out, int64_t i) {
    p.apply(rows.data() + i * kWidth, out.data() + i * kWidth, 1, kWidth, 42, 3, kFirst + i);
  };
  Image forward(rows.size()), backward(rows.size()), threaded(rows.size());
  for (int64_t i = 0; i < kRows; ++i) one(forward, i);
  for (int64_t i = kRows - 1; i >= 0; --i) one(backward, i);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int64_t i = t; i < kRows; i += 4) one(threaded, i);
    });
  for (std::thread& thread : threads) thread.join();
  Image in_place = rows;
  p.apply(in_place.data(), in_place.data(), kRows, kWidth, 42, 3, kFirst);

  EXPECT_EQ(forward, batch);
  EXPECT_EQ(backward, batch);
  EXPECT_EQ(threaded, batch);
  EXPECT_EQ(in_place, batch);
  EXPECT_NE(applied(p, rows, kWidth, 42, 4, kFirst), batch);      // another epoch
  EXPECT_NE(applied(p, rows, kWidth, 43, 3, kFirst), batch);      // another seed
  EXPECT_NE(applied(p, rows, kWidth, 42, 3, kFirst + 1), batch);  // each sample one place on
}

TEST(Preprocessing, EpochAndPositionDoNotTradePlaces) {
  const Preprocessing p = for_image(kEveryRandomOperation);
  const Image image = random_values(20, 13);
  EXPECT_NE(applied(p, image, 20, 42, 1, 2), applied(p, image, 20, 42, 2, 1));
}

// ---- The list as a whole -----------------------------------------------------------------------

TEST(Preprocessing, AnEmptyListCopiesTheRows) {
  const Preprocessing none = parse("[]", std::nullopt, 3);
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.describe(), "none");
  EXPECT_EQ(none.to_json(), json::array());
  EXPECT_EQ(none, Preprocessing());
  EXPECT_EQ(applied(none, Image{1, 2, 3, 4, 5, 6}, 3), (Image{1, 2, 3, 4, 5, 6}));
}

TEST(Preprocessing, DefaultsAreKerasAndReadBackTheSame) {
  const Preprocessing p = for_image(R"([{"type": "RandomFlip"},
                                        {"type": "RandomTranslation", "height_factor": 0.1, "width_factor": [0.2, -0.1]},
                                        {"type": "RandomZoom", "height_factor": -0.25},
                                        {"type": "RandomContrast", "factor": 0.5},
                                        {"type": "GaussianNoise", "stddev": 0.1},
                                        {"type": "HostWork", "microseconds_per_sample": 2.5}])");
  EXPECT_FALSE(p.empty());
  EXPECT_EQ(
      p.describe(),
      "RandomFlip(mode=horizontal_and_vertical), "
      "RandomTranslation(height_factor=[-0.1, 0.1], width_factor=[-0.1, 0.2], fill_mode=reflect, "
      "fill_value=0, "
      "interpolation=bilinear), "
      "RandomZoom(height_factor=[-0.25, 0.25], width_factor=null, fill_mode=reflect, fill_value=0, "
      "interpolation=bilinear), "
      "RandomContrast(factor=[0.5, 0.5], value_range=[0, 255]), "
      "GaussianNoise(stddev=0.1), "
      "HostWork(microseconds_per_sample=2.5)");
  const json written = p.to_json();
  EXPECT_EQ(written[1]["fill_mode"], "reflect");
  EXPECT_TRUE(written[2]["width_factor"].is_null());
  const Preprocessing again = Preprocessing::parse(json::parse(written.dump()), k4x5, 20, "child");
  EXPECT_EQ(again, p);
  EXPECT_EQ(again.to_json(), written);
  EXPECT_NE(p, for_image(R"([{"type": "RandomFlip", "mode": "vertical"}])"));
}

TEST(Preprocessing, ApplyRefusesRowsOfAnotherWidth) {
  const Preprocessing p = for_image(R"([{"type": "RandomFlip"}])");
  Image rows(21);
  EXPECT_THROW(p.apply(rows.data(), rows.data(), 1, 21, 1, 0, 0), std::invalid_argument);
  EXPECT_THROW(p.apply(rows.data(), rows.data(), -1, 20, 1, 0, 0), std::invalid_argument);
}

// ---- Errors ------------------------------------------------------------------------------------

TEST(Preprocessing, TheListAndItsOperationsMustBeWhatTheyAre) {
  EXPECT_THAT(
      parse_error(R"({"type": "RandomFlip"})"),
      HasSubstr(
          R"(spec.json: preprocessing: got {"type":"RandomFlip"}; expected an array of operations)"));
  EXPECT_THAT(parse_error("[3]"),
              HasSubstr("spec.json: preprocessing[0]: got 3; expected an operation"));
  EXPECT_THAT(parse_error(R"([{"mode": "horizontal"}])"),
              HasSubstr("spec.json: preprocessing[0].type: missing; expected one of RandomFlip, "
                        "RandomTranslation, "
                        "RandomZoom, RandomContrast, GaussianNoise, HostWork"));
  EXPECT_THAT(parse_error(R"([{"type": 3}])"),
              HasSubstr("preprocessing[0].type: got 3; expected one of RandomFlip"));
}

TEST(Preprocessing, AnUnknownTypeNamesTheKnownOnes) {
  EXPECT_THAT(
      parse_error(R"([{"type": "RandomFlip"}, {"type": "RandomCrop", "height": 20}])"),
      AllOf(
          HasSubstr(
              R"(spec.json: preprocessing[1].type: unknown type "RandomCrop"; expected one of )"
              "RandomFlip, RandomTranslation, RandomZoom, RandomContrast, GaussianNoise, HostWork"),
          Not(HasSubstr("did you mean"))));
  EXPECT_THAT(parse_error(R"([{"type": "RandomFlips"}])"),
              HasSubstr(R"(unknown type "RandomFlips" (did you mean "RandomFlip"?))"));
}

TEST(Preprocessing, AnUnknownKeyNamesTheAllowedOnes) {
  EXPECT_THAT(
      parse_error(R"([{"type": "RandomFlip", "mdoe": "vertical"}])"),
      HasSubstr(
          R"(spec.json: preprocessing[0].mdoe: unknown key (did you mean "mode"?); allowed keys: type, mode)"));
}

// Keras's layers take a seed; here every draw follows the model's, which the message says.
TEST(Preprocessing, AnOperationsSeedPointsToTheModels) {
  EXPECT_THAT(parse_error(R"([{"type": "GaussianNoise", "stddev": 0.1, "seed": 3}])"),
              HasSubstr("spec.json: preprocessing[0].seed: not an operation's parameter here; "
                        "every operation draws "
                        "from the model's \"seed\""));
}

TEST(Preprocessing, NamesMustBeKnown) {
  EXPECT_THAT(
      parse_error(R"([{"type": "RandomFlip", "mode": "diagonal"}])"),
      HasSubstr(
          R"(preprocessing[0].mode: got "diagonal"; expected one of horizontal, vertical, horizontal_and_vertical)"));
  EXPECT_THAT(
      parse_error(R"([{"type": "RandomZoom", "height_factor": 0.1, "fill_mode": "mirror"}])"),
      HasSubstr(
          R"(preprocessing[0].fill_mode: got "mirror"; expected one of reflect, constant, nearest, wrap)"));
  EXPECT_THAT(
      parse_error(R"([{"type": "RandomZoom", "height_factor": 0.1, "interpolation": "bicubic"}])"),
      HasSubstr(
          R"(preprocessing[0].interpolation: got "bicubic"; expected one of bilinear, nearest)"));
}

TEST(Preprocessing, FactorsMustBeInKerasRange) {
  const std::string factor =
      "expected a number in [-1, 1] or a pair [lower, upper] of numbers in [-1, 1]";
  EXPECT_THAT(
      parse_error(
          R"([{"type": "RandomFlip"}, {"type": "RandomTranslation", "height_factor": 1.5, "width_factor": 0}])"),
      HasSubstr("spec.json: preprocessing[1].height_factor: got 1.5; " + factor));
  EXPECT_THAT(
      parse_error(
          R"([{"type": "RandomTranslation", "height_factor": 0, "width_factor": [0.1, 0.2, 0.3]}])"),
      HasSubstr("preprocessing[0].width_factor: got [0.1,0.2,0.3]; " + factor));
  EXPECT_THAT(
      parse_error(
          R"([{"type": "RandomTranslation", "height_factor": 0, "width_factor": [-0.1, 2]}])"),
      HasSubstr("preprocessing[0].width_factor: got [-0.1,2]; " + factor));
  EXPECT_THAT(
      parse_error(R"([{"type": "RandomTranslation", "height_factor": "0.1", "width_factor": 0}])"),
      HasSubstr(R"(preprocessing[0].height_factor: got "0.1"; )" + factor));
  EXPECT_THAT(parse_error(R"([{"type": "RandomTranslation", "height_factor": 0.1}])"),
              HasSubstr("preprocessing[0].width_factor: missing; " + factor));
  EXPECT_THAT(parse_error(R"([{"type": "RandomZoom", "height_factor": -1.5}])"),
              HasSubstr("preprocessing[0].height_factor: got -1.5; " + factor));
  EXPECT_THAT(
      parse_error(R"([{"type": "RandomZoom", "height_factor": 0.1, "fill_value": "zero"}])"),
      HasSubstr(R"(preprocessing[0].fill_value: got "zero"; expected a finite number)"));
  EXPECT_THAT(parse_error(R"([{"type": "RandomZoom", "height_factor": 0.1, "fill_value": 1e39}])"),
              HasSubstr("preprocessing[0].fill_value: got 1e+39; expected a finite number"));
}

TEST(Preprocessing, ContrastNoiseAndWorkMustBeInRange) {
  const std::string contrast =
      "expected a number in [0, 1], or a pair [lower, upper] of numbers in [-1, 1] with "
      "lower + upper >= 0";
  EXPECT_THAT(parse_error(R"([{"type": "RandomContrast", "factor": 1.5}])"),
              HasSubstr("preprocessing[0].factor: got 1.5; " + contrast));
  EXPECT_THAT(parse_error(R"([{"type": "RandomContrast", "factor": [-0.5, 0.2]}])"),
              HasSubstr("preprocessing[0].factor: got [-0.5,0.2]; " + contrast));
  EXPECT_THAT(
      parse_error(R"([{"type": "RandomContrast", "factor": 0.1, "value_range": [255, 0]}])"),
      HasSubstr("preprocessing[0].value_range: got [255,0]; expected a pair [low, high] of finite "
                "numbers "
                "with low < high"));
  EXPECT_THAT(
      parse_error(R"([{"type": "GaussianNoise", "stddev": 1.5}])", std::nullopt),
      HasSubstr("spec.json: preprocessing[0].stddev: got 1.5; expected a number in [0, 1]"));
  EXPECT_THAT(parse_error(R"([{"type": "GaussianNoise"}])", std::nullopt),
              HasSubstr("preprocessing[0].stddev: missing; expected a number in [0, 1]"));
  EXPECT_THAT(
      parse_error(R"([{"type": "HostWork", "microseconds_per_sample": 0}])", std::nullopt),
      HasSubstr(
          "preprocessing[0].microseconds_per_sample: got 0; expected a number of microseconds in "
          "(0, 100000]"));
  EXPECT_THAT(
      parse_error(R"([{"type": "HostWork", "microseconds_per_sample": 2e5}])", std::nullopt),
      HasSubstr("preprocessing[0].microseconds_per_sample: got 200000.0; expected"));
}

TEST(Preprocessing, ImageOperationsNeedAnInputShape) {
  EXPECT_THAT(parse_error(R"([{"type": "GaussianNoise", "stddev": 0.1}, {"type": "RandomFlip"}])",
                          std::nullopt, 784),
              HasSubstr("spec.json: preprocessing[1]: RandomFlip needs an image, but the input has "
                        "no input_shape; "
                        R"(give the spec an "input_shape": [height, width, channels])"));
  EXPECT_FALSE(
      parse(
          R"([{"type": "GaussianNoise", "stddev": 0.1}, {"type": "HostWork", "microseconds_per_sample": 1}])",
          std::nullopt, 784)
          .empty());
}

TEST(Preprocessing, TheShapeMustHoldTheInput) {
  EXPECT_THAT(parse_error(R"([{"type": "RandomFlip"}])", ImageShape{28, 28, 3}, 784),
              HasSubstr("spec.json: input_shape: [28, 28, 3] holds 2352 values, but input is 784"));
  EXPECT_THAT(test::user_error([] {
                check_image_shape({28, 28, 3}, 784, "spec.json");
              }),
              HasSubstr("spec.json: input_shape: [28, 28, 3] holds 2352 values, but input is 784"));
  EXPECT_NO_THROW(check_image_shape({28, 28, 1}, 784, "spec.json"));
}

TEST(Preprocessing, AnInputShapeIsThreePositiveIntegers) {
  EXPECT_EQ(parse_image_shape(json::parse("[28, 28, 1]"), "spec.json"), (ImageShape{28, 28, 1}));
  for (const char* bad : {"[28, 28]", "[28, 28.0, 1]", "[0, 28, 1]", "[28, -28, 1]", R"("28x28")",
                          "[28, 28, true]"}) {
    SCOPED_TRACE(bad);
    EXPECT_THAT(test::user_error([&] { parse_image_shape(json::parse(bad), "spec.json"); }),
                AllOf(HasSubstr("spec.json: input_shape: got " + json::parse(bad).dump()),
                      HasSubstr("expected [height, width, channels], three positive integers")));
  }
}

}  // namespace
}  // namespace mf
