#include "runtime/formats.h"

#include <cmath>
#include <cstdio>

namespace mf {

std::string format_duration(double seconds) {
  char text[32];
  if (seconds < 1.0)
    std::snprintf(text, sizeof text, "%.0fms", seconds * 1e3);
  else
    std::snprintf(text, sizeof text, "%.2fs", seconds);
  return text;
}

std::string format_ratio(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", x);
  return text;
}

std::string format_metric(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

}  // namespace mf
