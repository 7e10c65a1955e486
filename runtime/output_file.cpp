#include "runtime/output_file.h"

#include <filesystem>
#include <fstream>

#include "runtime/error.h"

namespace mf {

void write_file_atomically(const std::string& path, const std::string& what,
                           const std::function<void(std::ostream&)>& write) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    write(out);
    if (!out.flush()) throw UserError(path + ": cannot write " + what);
  }
  std::error_code error;
  std::filesystem::rename(tmp, path, error);
  if (error) throw UserError(path + ": cannot write " + what + " (" + error.message() + ")");
}

}  // namespace mf
