#pragma once
// Preprocessing: the operations a spec's "preprocessing" list applies to each training sample on
// the host, in order, before the sample is copied to a backend (Keras's preprocessing layers, by
// their names, parameters and defaults). Example, for 28x28 grey images:
//
//   "input": 784,
//   "input_shape": [28, 28, 1],
//   "preprocessing": [
//     {"type": "RandomFlip", "mode": "horizontal"},
//     {"type": "RandomTranslation", "height_factor": 0.1, "width_factor": 0.1, "fill_mode":
//     "nearest"},
//     {"type": "RandomZoom", "height_factor": [-0.2, 0.1]},
//     {"type": "RandomContrast", "factor": 0.2, "value_range": [0, 1]},
//     {"type": "GaussianNoise", "stddev": 0.05},
//     {"type": "HostWork", "microseconds_per_sample": 20}
//   ]
//
// A sample is a row of `input` floats; an image is that row read as [height, width, channels],
// channels last (Keras's "channels_last": value (y, x, c) at (y * width + x) * channels + c).
//
// The operations, what each draws per sample, and where each formula comes from (Keras 3,
// keras/src/layers/preprocessing/image_preprocessing/ and keras/src/layers/regularization/):
//
//   RandomFlip         mode "horizontal" (left-right), "vertical" (top-bottom) or
//                      "horizontal_and_vertical" (the default): each flip of the mode with
//                      probability 1/2. Unlike Keras 3, which flips both axes on one draw (so an
//                      image is either kept or turned by 180 degrees), "horizontal_and_vertical"
//                      draws the two flips independently, as tf_keras 2 did: all four orientations
//                      are equally likely.
//   RandomTranslation  height_factor, width_factor (both required): a number f for [-|f|, |f|] or a
//                      pair [lower, upper] (sorted, as Keras does), each in [-1, 1], a fraction of
//                      the image's height or width; the shift is dy = draw * height, dx = draw *
//                      width pixels, positive down and right: output (y, x) reads the input at (y -
//                      dy, x - dx) (random_translation.py's matrix [[1, 0, -dx], [0, 1, -dy]]).
//   RandomZoom         height_factor (required), width_factor (default null: the height's draw,
//   which
//                      keeps the aspect ratio), each like a translation's; a draw f zooms by z = 1
//                      + f (f > 0 zooms out, f < 0 in): output x reads the input at z * x + (width
//                      - 1) / 2 * (1 - z), and y likewise (random_zoom.py's zoom matrix). We offer
//                      zoom, not RandomCrop, because zoom keeps the sample's shape: RandomCrop
//                      changes the input's width (the first layer's shape) and in Keras crops at
//                      evaluation too, where every other operation here leaves the data alone.
//   Translation and zoom both take fill_mode "reflect" (the default: d c b a | a b c d | d c b a,
//   about the edge of the last pixel), "constant" (k k k k | a b c d | k k k k, k = fill_value,
//   default 0), "nearest" (a a a a | a b c d | d d d d) or "wrap" (a b c d | a b c d | a b c d);
//   and interpolation "bilinear" (the default) or "nearest" (the pixel at floor(coordinate + 0.5)).
//   As in Keras's numpy and JAX backends (keras/src/backend/numpy/image.py, map_coordinates), the
//   image is first extended by fill_mode at whole pixels and then interpolated, so a constant fill
//   blends into the edge pixels under bilinear interpolation. RandomContrast     factor: a number f
//   in [0, 1] for the range [1 - f, 1 + f] (Keras's documented
//                      meaning; Keras 3's code draws from [1, 1 + f] for a single number), or a
//                      pair [lower, upper] (sorted) in [-1, 1] with lower + upper >= 0, for [1 -
//                      lower, 1 + upper] (so [-0.5, 0.5] is a fixed contrast of 1.5); value_range
//                      [low, high] (default [0, 255], low < high). Per sample one contrast c; per
//                      channel its mean m over the image; each value becomes (x - m) * c + m,
//                      clipped to value_range (random_contrast.py).
//   GaussianNoise      stddev (required, in [0, 1] as Keras 3 allows): adds N(0, stddev^2) to each
//   value
//                      (gaussian_noise.py); the only random operation that also takes flat inputs.
//   HostWork           microseconds_per_sample (required, in (0, 100000]): not Keras; a synthetic
//   cost
//                      of preparing a sample, for studies of the input pipeline. It keeps the
//                      calling thread's CPU busy for at least that long (and about a microsecond
//                      more, the work between two readings of the clock) on its own CPU clock
//                      (CLOCK_THREAD_CPUTIME_ID), so a loaded machine lengthens its wall time
//                      instead of shortening its work, by hashing the sample's values into a result
//                      that is stored (so no optimizer can remove the work); it leaves the data
//                      unchanged. Any input, flat or image.
//
// Every operation is what training does to a sample; at evaluation Keras leaves the data as it is,
// so there a caller applies none of them.
//
// Every draw comes from mf::Rng (runtime/rng.h) seeded by (the model's seed, the epoch, the
// sample's position in that epoch's order, the operation's index in the list) alone: a sample's
// result does not depend on which thread prepares it, in which batch or in which order. So an
// operation has no `seed` of its own, unlike Keras's layers: one is refused with a message that
// says so.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json_fwd.hpp>

namespace mf {

// An image's shape, Keras's "input_shape": [height, width, channels], channels last.
struct ImageShape {
  int height = 0, width = 0, channels = 0;

  int64_t values() const { return int64_t(height) * width * channels; }
  bool operator==(const ImageShape&) const = default;
};

// Reads an input_shape: three positive integers [height, width, channels]. Anything else is a
// UserError of one line: "SOURCE: PATH: got [28, 28]; expected [height, width, channels], ...".
ImageShape parse_image_shape(const nlohmann::json& value, const std::string& source,
                             const std::string& path = "input_shape");

// The shape must hold the input's `input` values (the spec's "input"): a UserError naming both
// otherwise ("SOURCE: PATH: [28, 28, 3] holds 2352 values, but input is 784; ...").
void check_image_shape(const ImageShape& shape, int64_t input, const std::string& source,
                       const std::string& path = "input_shape");

// An immutable list of operations, cheap to copy (its copies share one list) and safe to apply from
// any number of threads at once.
class Preprocessing {
 public:
  // No operations.
  Preprocessing() = default;

  // Reads a spec's "preprocessing" list (a JSON array of {"type": NAME, parameter: value, ...}) for
  // an input of `input` values, with `shape` the input's image shape or nullopt for a flat input.
  // Every problem is a UserError of one line that names `source` (the spec's file), the field's
  // path under `path` ("preprocessing[1].height_factor"), the value and what is allowed: a list
  // that is not an array, an operation that is not an object, a missing or unknown type (naming the
  // known ones), an unknown key (naming the allowed ones), a parameter of the wrong type or out of
  // range, an image operation on a flat input, a shape that does not hold `input` values
  // (check_image_shape). An `input` below 1 is the caller's mistake: std::invalid_argument.
  static Preprocessing parse(const nlohmann::json& list, const std::optional<ImageShape>& shape,
                             int64_t input, const std::string& source,
                             const std::string& path = "preprocessing");

  bool empty() const { return !plan_; }
  // The operations, in order, on one line for a log: "RandomFlip(mode=horizontal), GaussianNoise(
  // stddev=0.1)", or "none".
  std::string describe() const;
  // The list with every parameter written, defaults included, as parse reads it back to an equal
  // Preprocessing (a float crosses exactly: JSON numbers are doubles); [] when empty.
  nlohmann::json to_json() const;
  bool operator==(const Preprocessing& other) const;

  // Applies every operation, in order, to `count` samples of `width` floats: row i of `rows` is the
  // sample at `first_position + i` of epoch `epoch`'s order, and its result goes to row i of `out`.
  // `out` may be `rows` itself (in place) or memory that does not overlap it. `seed` is the
  // model's. With no operations the rows are copied (or left, in place). Throws
  // std::invalid_argument when `width` is not the input's width that parse was given, or count or
  // first_position is negative.
  void apply(const float* rows, float* out, int64_t count, int64_t width, uint64_t seed, int epoch,
             int64_t first_position) const;

 private:
  struct Plan;
  explicit Preprocessing(std::shared_ptr<const Plan> plan) : plan_(std::move(plan)) {}

  std::shared_ptr<const Plan> plan_;  // null when there are no operations
};

}  // namespace mf
