#pragma once
// numpy arrays as the rows a model reads: float32, C-contiguous, taken as they are (their buffer is
// borrowed, not copied); any other dtype or layout is converted once, by numpy, on the Python side
// (multifit/_arrays.py), before it gets here.
#include <cstdint>
#include <string>
#include <vector>

#include <nanobind/ndarray.h>

#include "data/dataset.h"
#include "nn/device_data.h"

namespace mfpy {

// x (rows, features) and y (rows,) or (rows, target_cols): float32, C-contiguous, on the CPU.
using Rows = nanobind::ndarray<const float, nanobind::c_contig, nanobind::device::cpu>;

// The rows of x and y (y may be absent: rows to predict on). A ValueError (mf::UserError) names the
// argument and its shape when x is not 2-D, y not 1-D or 2-D, or their rows differ.
mf::HostRows host_rows(const Rows& x, const Rows* y);

// What check_data reads of a data set besides its rows: its labels' class count and where the
// telling one is (data/dataset.h summarize_labels: "y[7]: label 2.5").
mf::Dataset label_summary(const mf::HostRows& rows);

// Keras's sample_weight for `rows` rows: (rows,) or (rows, 1), each a finite number >= 0, else a
// ValueError (mf::UserError) naming `name`, the shape or the first bad value.
std::vector<float> sample_weights(const Rows& weights, int64_t rows, const std::string& name);

}  // namespace mfpy
