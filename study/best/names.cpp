#include "study/best/names.h"

#include "study/rank_path.h"

namespace mf {
namespace {

constexpr size_t kLongestStem = 200;  // a file name may have 255 bytes; the suffixes need the rest
constexpr size_t kCutStem = 180;      // a longer one's bytes kept, before ~INDEX

bool plain_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-' || c == '+' || c == '=';
}

}  // namespace

std::string staging_folder(int rank) { return rank_sibling(kStagingFolder, rank); }

std::string best_file_stem(const std::string& name, size_t index) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string stem;
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (plain_byte(c) && !(i == 0 && c == '.')) {
      stem += char(c);
    } else {
      stem += '%';
      stem += kHex[c >> 4];
      stem += kHex[c & 15];
    }
  }
  if (stem.empty()) stem += '%';  // an empty name (no sweep has one, but the stem must be a name)
  // The cut may split a %XX; the ~ that follows, never written otherwise, keeps the stem apart from
  // every whole one, and the index from every other cut one.
  if (stem.size() > kLongestStem) stem = stem.substr(0, kCutStem) + "~" + std::to_string(index);
  return stem;
}

}  // namespace mf
