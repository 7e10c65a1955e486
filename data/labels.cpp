#include <cmath>
#include <cstdio>

#include "data/dataset.h"

namespace mf {

void summarize_labels(Dataset& data, std::span<const float> y, const std::string& where) {
  const size_t count = y.size(), stride = size_t(data.y_cols()), labels = size_t(data.target_cols);
  bool integer = true;
  float largest = 0;
  for (size_t i = 0; i < count && integer; ++i) {
    if (i % stride >= labels) continue;  // a row's weight
    const float label = y[i];
    const bool class_index = label >= 0 && label <= kMaxClassLabel && label == std::floor(label);
    if (!class_index || i == 0 || label > largest) {
      char at[48];
      std::snprintf(at, sizeof at, "[%zu]: label %g", i / stride, double(label));
      data.label_at = where + at;
    }
    integer = class_index;
    largest = std::max(largest, label);
  }
  data.classes = integer && count > 0 ? int(largest) + 1 : 0;
}

}  // namespace mf
