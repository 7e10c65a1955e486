#pragma once
// The operations of data/preprocessing.h as parsed, each with the function that applies it to one
// sample in place; internal to data/. preprocessing.cpp reads them from a spec and runs the list,
// preprocessing_image.cpp computes the image geometry (flip, translation, zoom), and
// preprocessing_values.cpp the rest (contrast, noise, host work). The meaning of every parameter,
// and where each formula comes from, is in data/preprocessing.h.
#include <cstdint>
#include <optional>
#include <variant>

#include "data/preprocessing.h"
#include "runtime/rng.h"

namespace mf::preprocessing {

enum class FlipMode { horizontal, vertical, horizontal_and_vertical };
enum class FillMode { reflect, constant, nearest, wrap };
enum class Interpolation { bilinear, nearest };

// A factor's range, lower <= upper; each draw is uniform in it.
struct Range {
  float lower = 0, upper = 0;
  bool operator==(const Range&) const = default;
};

// How translation and zoom read the input where it has no pixel, and between pixels.
struct Sampling {
  FillMode fill_mode = FillMode::reflect;
  float fill_value = 0;
  Interpolation interpolation = Interpolation::bilinear;
  bool operator==(const Sampling&) const = default;
};

struct RandomFlip {
  FlipMode mode = FlipMode::horizontal_and_vertical;
  bool operator==(const RandomFlip&) const = default;
};
struct RandomTranslation {
  Range height, width;  // fractions of the image's height and width
  Sampling sampling;
  bool operator==(const RandomTranslation&) const = default;
};
struct RandomZoom {
  Range height;
  std::optional<Range> width;  // none: the height's draw, keeping the aspect ratio
  Sampling sampling;
  bool operator==(const RandomZoom&) const = default;
};
struct RandomContrast {
  Range factor;  // the contrast is drawn from [1 - lower, 1 + upper]
  float low = 0, high = 255;
  bool operator==(const RandomContrast&) const = default;
};
struct GaussianNoise {
  float stddev = 0;
  bool operator==(const GaussianNoise&) const = default;
};
struct HostWork {
  double microseconds = 0;  // of the thread's CPU time per sample
  bool operator==(const HostWork&) const = default;
};

using Operation = std::variant<RandomFlip, RandomTranslation, RandomZoom, RandomContrast,
                               GaussianNoise, HostWork>;

// One sample being prepared: `values` holds `width` floats, changed in place; `scratch` as many,
// for an operation to write into before copying back; `shape` is the image's (all zero for a flat
// input, which only the operations that do not need an image see).
struct Sample {
  float* values;
  float* scratch;
  int64_t width;
  ImageShape shape;
};

// Each applies its operation to one sample, drawing from `rng`, which is the sample's and the
// operation's own.
void apply(const RandomFlip& op, const Sample& sample, Rng& rng);
void apply(const RandomTranslation& op, const Sample& sample, Rng& rng);
void apply(const RandomZoom& op, const Sample& sample, Rng& rng);
void apply(const RandomContrast& op, const Sample& sample, Rng& rng);
void apply(const GaussianNoise& op, const Sample& sample, Rng& rng);
void apply(const HostWork& op, const Sample& sample, Rng& rng);

}  // namespace mf::preprocessing
