// The weight column after a row's targets: Keras's sample_weight and class_weight (data/dataset.h).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "data/dataset.h"
#include "runtime/error.h"

namespace mf {

std::vector<float> class_weights_of(std::span<const float> y, int target_cols,
                                    const ClassWeights& weights) {
  const size_t cols = size_t(target_cols), rows = y.size() / cols;
  std::vector<float> out(rows, 1.f);
  for (size_t r = 0; r < rows; ++r) {
    const float* row = y.data() + r * cols;
    double label = 0;
    if (cols > 1) {
      for (size_t j = 1; j < cols; ++j)
        if (row[j] > row[size_t(label)]) label = double(j);
    } else {
      label = std::nearbyint(double(row[0]));  // numpy's round: half to even
    }
    if (std::abs(label) > 2e9) continue;  // no class a ClassWeights can name
    if (const auto it = weights.find(int(label)); it != weights.end()) out[r] = it->second;
  }
  return out;
}

std::vector<float> with_weight_column(std::span<const float> y, int target_cols,
                                      std::span<const float> weights) {
  const size_t cols = size_t(target_cols), rows = weights.size();
  if (y.size() != rows * cols)
    throw std::invalid_argument("with_weight_column: " + std::to_string(weights.size()) +
                                " weights for " + std::to_string(y.size() / cols) + " rows");
  std::vector<float> out(rows * (cols + 1));
  for (size_t r = 0; r < rows; ++r) {
    std::copy_n(y.data() + r * cols, cols, out.data() + r * (cols + 1));
    out[r * (cols + 1) + cols] = weights[r];
  }
  return out;
}

void weigh_by_class(Dataset& data, const ClassWeights& weights) {
  if (data.weights != RowWeights::none)
    throw std::invalid_argument("weigh_by_class: the data set has a weight column already");
  data.y = with_weight_column(data.y, data.target_cols,
                              class_weights_of(data.y, data.target_cols, weights));
  data.weights = RowWeights::by_class;
}

void take_sample_weights(Dataset& data, const std::string& where) {
  if (data.weights != RowWeights::none)
    throw std::invalid_argument("take_sample_weights: the data set has a weight column already");
  if (data.target_cols < 2)
    throw UserError(
        where +
        ": one target value per row, but fit.sample_weight reads each row's targets and then its weight; add the weights as the last column");
  data.target_cols -= 1;
  data.weights = RowWeights::sample;
  const size_t stride = size_t(data.y_cols());
  for (size_t r = 0; r < size_t(data.rows); ++r)
    if (const float w = data.y[r * stride + size_t(data.target_cols)]; w < 0)
      throw UserError(where + ": row " + std::to_string(r) + "'s weight is " + std::to_string(w) +
                      "; a weight multiplies its row's loss: expected a number >= 0");
  summarize_labels(data, data.y, where);
}

}  // namespace mf
