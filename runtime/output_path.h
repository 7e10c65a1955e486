#pragma once
#include <string>
#include <vector>

namespace mf {

// An output file's folder must exist and be writable before any work starts, so that a run never
// trains for nothing. Throws UserError naming the flag and the path.
void check_output_path(const char* flag, const std::string& path);

// A file a command names: what it is ("the spec", "--json") and its path ("" when not given).
struct NamedFile {
  const char* what;
  std::string path;
};

// No output may overwrite an input or another output (--json over the spec would replace it):
// a UserError naming both.
void check_distinct_files(const std::vector<NamedFile>& inputs, const std::vector<NamedFile>& outputs);

}  // namespace mf
