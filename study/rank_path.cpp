#include "study/rank_path.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace mf {

namespace fs = std::filesystem;

namespace {

constexpr const char* kRankSuffix = ".rank-";

// R when `number` is a rank's decimal number (1 to 9 digits), else -1.
int parse_rank(const std::string& number) {
  if (number.empty() || number.size() > 9 ||
      !std::all_of(number.begin(), number.end(), [](unsigned char c) { return std::isdigit(c); }))
    return -1;
  return std::stoi(number);
}

}  // namespace

std::string rank_sibling(const std::string& path, int rank) {
  return rank == 0 ? path : path + kRankSuffix + std::to_string(rank);
}

std::string rank_sibling_base(const std::string& path) {
  const size_t at = path.rfind(kRankSuffix);
  if (at == std::string::npos || parse_rank(path.substr(at + std::string(kRankSuffix).size())) < 0)
    return path;
  return path.substr(0, at);
}

std::vector<std::pair<int, std::string>> rank_siblings(const std::string& path) {
  const fs::path file(path);
  const fs::path folder = file.has_parent_path() ? file.parent_path() : fs::path(".");
  const std::string prefix = file.filename().string() + kRankSuffix;
  std::vector<std::pair<int, std::string>> found;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const int rank = parse_rank(name.substr(prefix.size()));
    if (rank > 0) found.push_back({rank, rank_sibling(path, rank)});
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace mf
