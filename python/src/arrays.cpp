#include "arrays.h"

#include "runtime/error.h"

namespace mfpy {
namespace {

std::string shape_of(const Rows& a) {
  std::string text = "(";
  for (size_t i = 0; i < a.ndim(); ++i) text += (i ? ", " : "") + std::to_string(a.shape(i));
  return text + (a.ndim() == 1 ? ",)" : ")");
}

}  // namespace

mf::HostRows host_rows(const Rows& x, const Rows* y) {
  if (x.ndim() != 2)
    throw mf::UserError("x has shape " + shape_of(x) +
                        "; expected (rows, features): one row of features per sample");
  mf::HostRows rows;
  rows.rows = int64_t(x.shape(0));
  rows.features = int(x.shape(1));
  rows.x = x.data();
  mf::check_finite({rows.x, size_t(rows.rows) * size_t(rows.features)}, rows.features, "x");
  if (!y) return rows;
  if (y->ndim() != 1 && y->ndim() != 2)
    throw mf::UserError("y has shape " + shape_of(*y) + "; expected (rows,) or (rows, targets)");
  if (int64_t(y->shape(0)) != rows.rows)
    throw mf::UserError("x has " + std::to_string(rows.rows) + " rows but y has " +
                        std::to_string(y->shape(0)) + "; they must have one row per sample each");
  rows.target_cols = y->ndim() == 1 ? 1 : int(y->shape(1));
  rows.y = y->data();
  mf::check_finite({rows.y, size_t(rows.rows) * size_t(rows.target_cols)}, rows.target_cols, "y");
  return rows;
}

mf::Dataset label_summary(const mf::HostRows& rows) {
  mf::Dataset summary;
  summary.rows = rows.rows;
  summary.features = rows.features;
  summary.target_cols = rows.target_cols;
  summary.weights = rows.weights;
  mf::summarize_labels(summary, {rows.y, size_t(rows.rows) * size_t(summary.y_cols())}, "y");
  return summary;
}

std::vector<float> sample_weights(const Rows& weights, int64_t rows, const std::string& name) {
  const bool column = weights.ndim() == 2 && weights.shape(1) == 1;
  if ((weights.ndim() != 1 && !column) || int64_t(weights.shape(0)) != rows)
    throw mf::UserError(name + " has shape " + shape_of(weights) + "; expected (" +
                        std::to_string(rows) + ",): one weight per row of x");
  std::vector<float> values(weights.data(), weights.data() + rows);
  mf::check_finite(values, 1, name);
  for (size_t r = 0; r < values.size(); ++r)
    if (values[r] < 0)
      throw mf::UserError(name + "[" + std::to_string(r) + "] is " + std::to_string(values[r]) +
                          ": a weight multiplies its row's loss; expected a number >= 0");
  return values;
}

}  // namespace mfpy
