#include "runtime/input_file.h"

#include <filesystem>

#include "runtime/bytes.h"
#include "runtime/error.h"

namespace mf {
namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& problem,
                         const std::string& what, uintmax_t max_bytes) {
  throw UserError(path + ": " + problem + "; the " + what + " must be a regular file of at most " +
                  format_bytes(max_bytes));
}

}  // namespace

void check_input_file(const std::string& path, const std::string& what, uintmax_t max_bytes) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  switch (status.type()) {
    case fs::file_type::regular:
      break;
    case fs::file_type::not_found:
      throw UserError(path + ": no such file (the " + what + ")");
    case fs::file_type::directory:
      refuse(path, "is a folder", what, max_bytes);
    case fs::file_type::character:
    case fs::file_type::block:
      refuse(path, "is a device", what, max_bytes);
    case fs::file_type::fifo:
    case fs::file_type::socket:
      refuse(path, "is a pipe or socket", what, max_bytes);
    default:
      throw UserError(path + ": cannot read the " + what + " (" + error.message() + ")");
  }
  const uintmax_t size = fs::file_size(path, error);
  if (error) throw UserError(path + ": cannot read the " + what + " (" + error.message() + ")");
  if (size > max_bytes) refuse(path, "is " + format_bytes_exact(size) + " long", what, max_bytes);
}

}  // namespace mf
