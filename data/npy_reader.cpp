// numpy's .npy files (the format np.save writes, numpy.lib.format): the magic "\x93NUMPY", a
// version (1.0: a u16 header length; 2.0 and 3.0: u32), then a Python dict literal with 'descr'
// (the dtype, e.g. '<f4'), 'fortran_order' and 'shape', then the array's bytes, row-major unless
// fortran_order.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "runtime/error.h"
#include "runtime/input_file.h"

namespace mf {
namespace {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> values;  // row-major, as float32
};

template <class T>
float as_float(const char* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return float(value);
}

// One element of dtype `kind` (f, i, u or b) and `size` bytes, little-endian, as a float.
float element(const char* p, char kind, int size) {
  switch (kind * 16 + size) {
    case 'f' * 16 + 4:
      return as_float<float>(p);
    case 'f' * 16 + 8:
      return as_float<double>(p);
    case 'i' * 16 + 1:
      return as_float<int8_t>(p);
    case 'i' * 16 + 2:
      return as_float<int16_t>(p);
    case 'i' * 16 + 4:
      return as_float<int32_t>(p);
    case 'i' * 16 + 8:
      return as_float<int64_t>(p);
    case 'u' * 16 + 1:
      return as_float<uint8_t>(p);
    case 'u' * 16 + 2:
      return as_float<uint16_t>(p);
    case 'u' * 16 + 4:
      return as_float<uint32_t>(p);
    case 'u' * 16 + 8:
      return as_float<uint64_t>(p);
    case 'b' * 16 + 1:
      return *p ? 1.f : 0.f;
  }
  return 0;  // not reached: read_npy refuses other dtypes first
}

NpyArray read_npy(const std::string& path) {
  check_input_file(path, "numpy .npy file", kMaxDataFileBytes);
  std::ifstream in(path, std::ios::binary);
  const auto fail = [&](const std::string& what) -> NpyArray {
    throw UserError(path + ": " + what);
  };
  char magic[8] = {};
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    fail("not a numpy .npy file (no \\x93NUMPY magic); write it with numpy.save");
  uint32_t header_bytes = 0;
  if (magic[6] == 1) {
    uint16_t n = 0;
    in.read(reinterpret_cast<char*>(&n), 2);
    header_bytes = n;
  } else if (magic[6] == 2 || magic[6] == 3) {
    in.read(reinterpret_cast<char*>(&header_bytes), 4);
  } else {
    fail(".npy version " + std::to_string(int(magic[6])) +
         " is not known; versions 1 to 3 are read");
  }
  std::string header(header_bytes, '\0');
  if (!in.read(header.data(), header_bytes)) fail("the .npy header is cut short");
  std::smatch descr, order, shape;
  static const std::regex kDescr(R"('descr'\s*:\s*'([<>|=])([fiub])(\d+)')"),
      kOrder(R"('fortran_order'\s*:\s*(True|False))"), kShape(R"('shape'\s*:\s*\(([^)]*)\))");
  if (!std::regex_search(header, descr, kDescr))
    fail("dtype " + header.substr(0, 80) +
         " is not read; the .npy must hold a real, integer or bool array");
  if (!std::regex_search(header, order, kOrder) || !std::regex_search(header, shape, kShape))
    fail("the .npy header has no fortran_order or shape");
  if (order[1] == "True") fail("a Fortran-ordered array; save np.ascontiguousarray(a)");
  const char kind = descr[2].str()[0];
  const int size = std::stoi(descr[3]);
  if (descr[1] == ">" && size > 1)
    fail("a big-endian array; save it as little-endian (a.astype('<f4'))");
  const bool known =
      (kind == 'f' && (size == 4 || size == 8)) || (kind == 'b' && size == 1) ||
      ((kind == 'i' || kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8));
  if (!known)
    fail("dtype " + descr[1].str() + kind + std::to_string(size) +
         " is not read; real, integer or bool only");
  NpyArray array;
  int64_t count = 1;
  const std::string dims = shape[1];
  for (size_t at = 0; at < dims.size();) {
    const size_t comma = dims.find(',', at);
    const std::string dim =
        dims.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (dim.find_first_not_of(" ") != std::string::npos) {
      array.shape.push_back(std::stoll(dim));
      count *= array.shape.back();
    }
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  std::vector<char> bytes(size_t(count) * size_t(size));
  if (!in.read(bytes.data(), std::streamsize(bytes.size())))
    fail("holds fewer bytes than its shape needs: cut short");
  array.values.resize(size_t(count));
  for (int64_t i = 0; i < count; ++i)
    array.values[size_t(i)] = element(bytes.data() + i * size, kind, size);
  return array;
}

}  // namespace

Dataset load_npy_pair(const std::string& x_path, const std::string& y_path) {
  NpyArray x = read_npy(x_path), y = read_npy(y_path);
  if (x.shape.size() < 2 || x.shape[0] < 1)
    throw UserError(
        x_path + ": x must have one row per sample and features: shape (rows, features...), not " +
        std::to_string(x.shape.size()) + "-D");
  if (y.shape.empty() || y.shape.size() > 2 || y.shape[0] != x.shape[0])
    throw UserError(y_path + ": y must be (rows,) or (rows, targets) with x's " +
                    std::to_string(x.shape[0]) + " rows");
  Dataset data;
  data.rows = x.shape[0];
  data.features = int(int64_t(x.values.size()) / data.rows);  // an image's dimensions flattened
  data.target_cols = y.shape.size() == 2 ? int(y.shape[1]) : 1;
  check_finite(x.values, data.features, x_path);
  check_finite(y.values, data.target_cols, y_path);
  data.x = std::move(x.values);
  data.y = std::move(y.values);
  summarize_labels(data, data.y, y_path);
  return data;
}

}  // namespace mf
