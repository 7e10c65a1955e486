#include <cmath>
#include <string>

#include "data/dataset.h"
#include "runtime/error.h"

namespace mf {

void check_finite(std::span<const float> values, int cols, const std::string& where) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isfinite(values[i])) continue;
    const size_t row = i / size_t(cols), col = i % size_t(cols);
    const std::string at =
        cols == 1 ? where + "[" + std::to_string(row) + "]"
                  : where + "[" + std::to_string(row) + ", " + std::to_string(col) + "]";
    throw UserError(
        at + " is " +
        (std::isnan(values[i]) ? "NaN"
         : values[i] > 0       ? "inf"
                               : "-inf") +
        ": a model cannot train or be evaluated on a value that is not finite (each step's loss would be NaN); remove or impute such values first");
  }
}

}  // namespace mf
