#include "runtime/output_path.h"

#include <unistd.h>

#include <filesystem>

#include "runtime/error.h"
#include "runtime/output_file.h"

namespace mf {
namespace {

namespace fs = std::filesystem;

// What a file that is neither a folder nor a regular file is, in words.
const char* kind_of(fs::file_type type) {
  switch (type) {
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::socket:
      return "a socket";
    default:
      return "of an unknown kind";
  }
}

}  // namespace

void check_output_path(const char* flag, const std::string& path, bool standard_output) {
  if (path.empty() || (standard_output && is_standard_output(path))) return;
  const std::string named = std::string(flag) + " " + path;
  std::error_code error;
  const fs::path parent = fs::absolute(path, error).parent_path();
  const fs::file_status status = fs::status(path, error);  // through a symbolic link
  if (fs::is_directory(status)) throw UserError(named + ": is a folder; give a file name");
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw UserError(named + ": is " + kind_of(status.type()) +
                    ", not a regular file; give a file name" +
                    (standard_output ? ", or - for standard output" : ""));
  if (!fs::is_directory(parent, error))
    throw UserError(named + (fs::exists(parent, error)
                                 ? ": " + parent.string() + " is not a folder"
                                 : ": the folder " + parent.string() + " does not exist"));
  if (access(parent.c_str(), W_OK) != 0)
    throw UserError(named + ": the folder " + parent.string() + " is not writable");
}

void check_distinct_files(const std::vector<NamedFile>& inputs,
                          const std::vector<NamedFile>& outputs) {
  const NamedFile* standard = nullptr;  // the output that is `-`, no file
  std::vector<NamedFile> files = inputs;
  for (const NamedFile& out : outputs) {
    if (out.path.empty()) continue;
    if (is_standard_output(out.path)) {
      if (standard)
        throw UserError(std::string(out.what) + " -: " + standard->what +
                        " writes to standard output already; at most one output may be -");
      standard = &out;
      continue;
    }
    for (const NamedFile& other : files) {
      std::error_code error;
      if (!other.path.empty() &&
          fs::weakly_canonical(out.path, error) == fs::weakly_canonical(other.path, error))
        throw UserError(std::string(out.what) + " " + out.path + ": is also " + other.what +
                        "; give the output its own file");
    }
    files.push_back(out);
  }
}

}  // namespace mf
