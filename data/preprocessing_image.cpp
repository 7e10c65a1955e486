// The image operations of data/preprocessing.h: flip, translation and zoom. Translation and zoom
// both map each output pixel to an input coordinate, source = scale * output + offset on each axis,
// and sample there as Keras's numpy backend does (keras/src/backend/numpy/image.py's
// map_coordinates): the image extended past its edges at whole pixels by fill_mode, then
// interpolated.
#include <algorithm>
#include <cmath>
#include <vector>

#include "data/preprocessing_ops.h"

namespace mf::preprocessing {
namespace {

constexpr int64_t kFill = -1;  // a tap past the edge under a constant fill: it reads the fill value

// Pixel i of an axis of n pixels, the axis extended past its edges by `mode`.
int64_t extend(int64_t i, int64_t n, FillMode mode) {
  if (i >= 0 && i < n) return i;
  if (mode == FillMode::constant) return kFill;
  if (mode == FillMode::nearest) return std::clamp<int64_t>(i, 0, n - 1);
  // wrap repeats the axis (period n); reflect repeats it and its mirror image (period 2n).
  const int64_t period = mode == FillMode::wrap ? n : 2 * n;
  const int64_t m = (i % period + period) % period;
  return m < n ? m : period - 1 - m;
}

// Where one output pixel of an axis reads: two input pixels (kFill: the fill value) and their
// weights.
struct Taps {
  int64_t index[2];
  float weight[2];
};

// The taps of each of an axis's n output pixels, output o reading the input at scale * o + offset.
std::vector<Taps> axis_taps(int64_t n, float scale, float offset, const Sampling& sampling) {
  std::vector<Taps> taps(static_cast<size_t>(n));
  for (int64_t o = 0; o < n; ++o) {
    const float at = scale * float(o) + offset;
    Taps& t = taps[size_t(o)];
    if (sampling.interpolation == Interpolation::nearest) {
      const int64_t i = extend(int64_t(std::floor(at + 0.5f)), n, sampling.fill_mode);
      t = {{i, i}, {1.f, 0.f}};
    } else {
      const float below = std::floor(at);
      const int64_t i = int64_t(below);
      t = {{extend(i, n, sampling.fill_mode), extend(i + 1, n, sampling.fill_mode)},
           {1.f - (at - below), at - below}};
    }
  }
  return taps;
}

// The image resampled through the taps of its rows and columns, in place: the sum over both axes'
// taps of their weights' product times the pixel. A tap of weight 0 is skipped, so that an identity
// map (weights 1 and 0) gives the input back exactly, whatever its neighbours hold.
void resample(const Sample& s, const std::vector<Taps>& rows, const std::vector<Taps>& cols,
              float fill_value) {
  const int64_t width = s.shape.width, channels = s.shape.channels;
  for (int64_t y = 0; y < s.shape.height; ++y)
    for (int64_t x = 0; x < width; ++x)
      for (int64_t c = 0; c < channels; ++c) {
        float sum = 0;
        for (int a = 0; a < 2; ++a)
          for (int b = 0; b < 2; ++b) {
            const float weight = rows[size_t(y)].weight[a] * cols[size_t(x)].weight[b];
            if (weight == 0) continue;
            const int64_t iy = rows[size_t(y)].index[a], ix = cols[size_t(x)].index[b];
            sum +=
                weight * (iy == kFill || ix == kFill ? fill_value
                                                     : s.values[(iy * width + ix) * channels + c]);
          }
        s.scratch[(y * width + x) * channels + c] = sum;
      }
  std::copy(s.scratch, s.scratch + s.width, s.values);
}

// A fair coin: the top bit of one draw.
bool coin(Rng& rng) { return rng.next() >> 63; }

float draw(const Range& range, Rng& rng) { return rng.uniform(range.lower, range.upper); }

}  // namespace

void apply(const RandomFlip& op, const Sample& s, Rng& rng) {
  // One coin per axis of the mode, the horizontal one first.
  const bool horizontal = op.mode != FlipMode::vertical && coin(rng);
  const bool vertical = op.mode != FlipMode::horizontal && coin(rng);
  if (!horizontal && !vertical) return;
  const int64_t height = s.shape.height, width = s.shape.width, channels = s.shape.channels;
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x) {
      const int64_t from_y = vertical ? height - 1 - y : y, from_x = horizontal ? width - 1 - x : x;
      std::copy_n(s.values + (from_y * width + from_x) * channels, channels,
                  s.scratch + (y * width + x) * channels);
    }
  std::copy(s.scratch, s.scratch + s.width, s.values);
}

void apply(const RandomTranslation& op, const Sample& s, Rng& rng) {
  // As Keras: the height's fraction first, each times the image's size in pixels.
  const float dy = draw(op.height, rng) * float(s.shape.height);
  const float dx = draw(op.width, rng) * float(s.shape.width);
  resample(s, axis_taps(s.shape.height, 1, -dy, op.sampling),
           axis_taps(s.shape.width, 1, -dx, op.sampling), op.sampling.fill_value);
}

void apply(const RandomZoom& op, const Sample& s, Rng& rng) {
  const float zy = 1 + draw(op.height, rng);
  const float zx = op.width ? 1 + draw(*op.width, rng) : zy;
  // The zoom keeps the image's centre, (size - 1) / 2, where it is.
  const auto taps = [&](int64_t n, float z) {
    return axis_taps(n, z, float(n - 1) / 2 * (1 - z), op.sampling);
  };
  resample(s, taps(s.shape.height, zy), taps(s.shape.width, zx), op.sampling.fill_value);
}

}  // namespace mf::preprocessing
