#pragma once
#include <string>
#include <vector>

namespace mf {

// An output path is checked before any work starts, so that a run never trains for nothing: its
// folder must exist and be writable, and what is there already must be a regular file (a device,
// a FIFO or a socket would be replaced by the renamed file, or never hold a whole one). `-`
// (standard output) passes where `standard_output` allows it. Throws UserError naming the flag,
// the path and what is wrong: "--json /dev/full: is a character device, not a regular file; give
// a file name, or - for standard output" (the last words only where - is allowed).
void check_output_path(const char* flag, const std::string& path, bool standard_output = true);

// A file a command names: what it is ("the spec", "--json") and its path ("" when not given).
struct NamedFile {
  const char* what;
  std::string path;
};

// No output may overwrite an input or another output (--json over the spec would replace it), and
// at most one output may be `-`, standard output: a UserError naming both.
void check_distinct_files(const std::vector<NamedFile>& inputs,
                          const std::vector<NamedFile>& outputs);

}  // namespace mf
