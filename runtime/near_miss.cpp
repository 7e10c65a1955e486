#include "runtime/near_miss.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mf {
namespace {

// Optimal string alignment distance: insertions, deletions, substitutions, and swaps of neighbours.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// Whether a and b differ in their digits alone ("relu6" and "relu", "Conv1D" and "Conv2D"): two
// variants of a thing, which no one types for the other.
bool differ_in_digits_only(const std::string& a, const std::string& b) {
  const auto letters = [](std::string s) {
    s.erase(std::remove_if(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }),
            s.end());
    return s;
  };
  return a != b && letters(a) == letters(b);
}

}  // namespace

std::string near_miss(const std::string& word, const std::vector<std::string>& known) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const std::string& name : known) {
    if (differ_in_digits_only(word, name)) continue;
    const size_t distance = edit_distance(word, name);
    if (distance < best_distance) best = name, best_distance = distance;
  }
  if (best_distance == 0 || best_distance > 2) return "";
  return 3 * best_distance <= std::max(word.size(), best.size()) ? best : "";
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& known) {
  const std::string meant = near_miss(word, known);
  return meant.empty() ? "" : " (did you mean \"" + meant + "\"?)";
}

}  // namespace mf
