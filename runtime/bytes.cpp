#include "runtime/bytes.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "runtime/error.h"

namespace mf {

namespace {

struct Unit {
  const char* name;
  double scale;
};
// A bare number is bytes.
constexpr Unit kUnits[] = {{"", 1},         {"B", 1},       {"KB", 1e3},     {"MB", 1e6},
                           {"GB", 1e9},     {"TB", 1e12},   {"KiB", 0x1p10}, {"MiB", 0x1p20},
                           {"GiB", 0x1p30}, {"TiB", 0x1p40}};

}  // namespace

size_t parse_bytes(const std::string& text, const std::string& what) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double number = std::strtod(begin, &end);
  const std::string unit(end);
  if (end != begin && std::isfinite(number) && number > 0) {
    for (const Unit& u : kUnits)
      if (unit == u.name && number * u.scale < 0x1p62)
        return size_t(std::llround(number * u.scale));
  }
  throw UserError(what + ": '" + text + "' is not a positive size; write bytes or a number with " +
                  size_units());
}

const std::string& size_units() {
  static const std::string units = [] {
    std::string names;
    constexpr size_t n = std::size(kUnits);
    for (size_t i = 1; i < n; ++i)
      names += std::string(i == 1 ? "" : i + 1 == n ? " or " : ", ") + kUnits[i].name;
    return names;
  }();
  return units;
}

std::string format_bytes(size_t bytes) {
  char out[32];
  if (bytes >= (size_t(1) << 30))
    std::snprintf(out, sizeof out, "%.2f GiB", double(bytes) / (1 << 30));
  else if (bytes >= (size_t(1) << 20))
    std::snprintf(out, sizeof out, "%.2f MiB", double(bytes) / (1 << 20));
  else if (bytes >= 1024)
    std::snprintf(out, sizeof out, "%.2f KiB", double(bytes) / 1024);
  else
    std::snprintf(out, sizeof out, "%zu B", bytes);
  return out;
}

std::string format_bytes_exact(size_t bytes) {
  return bytes < 1024 ? format_bytes(bytes)
                      : format_bytes(bytes) + " (" + std::to_string(bytes) + " bytes)";
}

}  // namespace mf
