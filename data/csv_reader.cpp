// CSV data: one row per line, the feature values and then the label (or the spec's targets
// columns), separated by commas.
#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/dataset.h"
#include "runtime/error.h"
#include "runtime/input_file.h"

namespace mf {
namespace {

std::string_view trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

std::vector<std::string_view> split_cells(std::string_view line) {
  std::vector<std::string_view> cells;
  size_t start = 0;
  for (size_t comma; (comma = line.find(',', start)) != std::string_view::npos; start = comma + 1)
    cells.push_back(trim(line.substr(start, comma - start)));
  cells.push_back(trim(line.substr(start)));
  return cells;
}

// The whole cell as a float, or nothing when it is not a number. It is parsed as a double and then
// rounded, so that a tiny value becomes 0 or a subnormal as with strtof; one beyond the float range
// comes back infinite. "nan" and "inf" parse too, and the caller rejects all that is not finite.
// A leading '+' is accepted as strtof would.
std::optional<float> parse_number(std::string_view cell) {
  if (cell.size() > 1 && cell[0] == '+' && cell[1] != '+' && cell[1] != '-') cell.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  if (cell.empty() || end != cell.data() + cell.size()) return {};
  if (error == std::errc::result_out_of_range ||
      std::abs(value) > std::numeric_limits<float>::max())
    return std::numeric_limits<float>::infinity();
  return float(value);
}

bool is_number(std::string_view cell) { return parse_number(cell).has_value(); }

bool is_blank(std::string_view line) { return trim(line).empty(); }

class CsvParser {
 public:
  CsvParser(const std::string& path, int targets) : path_(path), targets_(size_t(targets)) {}

  Dataset parse() {
    check_input_file(path_, "CSV file", kMaxDataFileBytes);
    std::ifstream in(path_, std::ios::binary);
    if (!in) throw UserError(path_ + ": cannot open: " + std::strerror(errno));
    // Blank lines are held back until a data line follows them, which makes them an error.
    size_t number = 0, first_blank = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (is_blank(line)) {
        if (first_blank == 0) first_blank = number;
        continue;
      }
      if (first_blank != 0)
        fail(first_blank, "blank line inside the data; only trailing blank lines are allowed");
      add_line(line, number);
    }
    if (in.bad()) throw UserError(path_ + ": cannot read: " + std::strerror(errno));
    if (data_.rows == 0)
      throw UserError(path_ +
                      ": no data rows; each line holds the feature values and then the label");
    data_.classes = integer_labels_ ? int(max_label_) + 1 : 0;
    return std::move(data_);
  }

 private:
  [[noreturn]] void fail(size_t line, const std::string& what) const {
    throw UserError(path_ + ":" + std::to_string(line) + ": " + what);
  }

  [[noreturn]] void fail_cell(size_t line, size_t column, std::string_view cell,
                              const char* what) const {
    fail(line, "column " + std::to_string(column + 1) + ": '" + std::string(cell) + "' " + what);
  }

  void add_line(std::string_view line, size_t number) {
    const std::vector<std::string_view> cells = split_cells(line);
    check_columns(cells.size(), number);
    // The first line is a header, and skipped, only if no cell of it is a number: a line that
    // mixes numbers and words is taken as data, and its words are reported as bad values.
    if (number == 1 && std::none_of(cells.begin(), cells.end(), is_number)) return;
    for (size_t column = 0; column < cells.size(); ++column) {
      const std::optional<float> value = parse_number(cells[column]);
      if (!value)
        fail_cell(number, column, cells[column], "is not a number; cells hold decimal numbers");
      if (!std::isfinite(*value))
        fail_cell(number, column, cells[column],
                  "is not a finite float; NaN, infinity and values beyond 3.4e38 are not allowed");
      if (column + targets_ < cells.size())
        data_.x.push_back(*value);
      else
        add_label(*value, number, cells[column]);
    }
    ++data_.rows;
  }

  // Every line, the header included, has as many cells as the first one.
  void check_columns(size_t columns, size_t number) {
    const std::string labels =
        targets_ == 1 ? "the label column" : std::to_string(targets_) + " target columns";
    if (number == 1) {
      if (columns < targets_ + 1)
        fail(number, std::to_string(columns) +
                         " column(s); a line needs at least one feature column and then " + labels);
      data_.features = int(columns - targets_);
      data_.target_cols = int(targets_);
    } else if (columns != size_t(data_.features) + targets_) {
      fail(number, std::to_string(columns) + " columns, expected " +
                       std::to_string(size_t(data_.features) + targets_) + " as in line 1");
    }
  }

  void add_label(float label, size_t line, std::string_view cell) {
    data_.y.push_back(label);
    const bool class_index = label >= 0 && label <= kMaxClassLabel && label == std::floor(label);
    const std::string at = path_ + ":" + std::to_string(line) + ": label " + std::string(cell);
    // the first one that is not a class
    if (integer_labels_ && !class_index)
      data_.label_at = at;
    else if (integer_labels_ && (data_.rows == 0 || label > max_label_))
      data_.label_at = at;
    integer_labels_ = integer_labels_ && class_index;
    max_label_ = std::max(max_label_, label);
  }

  std::string path_;
  size_t targets_;  // the last columns of each row
  Dataset data_;
  bool integer_labels_ = true;
  float max_label_ = 0;
};

}  // namespace

Dataset load_csv(const std::string& path, int targets) { return CsvParser(path, targets).parse(); }

}  // namespace mf
