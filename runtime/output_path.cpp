#include "runtime/output_path.h"

#include <unistd.h>

#include <filesystem>

#include "runtime/error.h"

namespace mf {

void check_output_path(const char* flag, const std::string& path) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path parent = fs::absolute(path, error).parent_path();
  if (fs::is_directory(path, error))
    throw UserError(std::string(flag) + " " + path + ": is a folder; give a file name");
  if (!fs::is_directory(parent, error))
    throw UserError(std::string(flag) + " " + path + ": the folder " + parent.string() + " does not exist");
  if (access(parent.c_str(), W_OK) != 0)
    throw UserError(std::string(flag) + " " + path + ": the folder " + parent.string() + " is not writable");
}

void check_distinct_files(const std::vector<NamedFile>& inputs, const std::vector<NamedFile>& outputs) {
  namespace fs = std::filesystem;
  std::vector<NamedFile> seen = inputs;
  for (const NamedFile& out : outputs) {
    for (const NamedFile& other : seen) {
      std::error_code error;
      if (!out.path.empty() && !other.path.empty() &&
          fs::weakly_canonical(out.path, error) == fs::weakly_canonical(other.path, error))
        throw UserError(std::string(out.what) + " " + out.path + ": is also " + other.what +
                        "; give the output its own file");
    }
    seen.push_back(out);
  }
}

}  // namespace mf
