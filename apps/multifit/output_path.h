#pragma once
#include <string>

namespace mf {

// An output file's folder must exist and be writable before any work starts, so that a run never
// trains for nothing. Throws UserError naming the flag and the path.
void check_output_path(const char* flag, const std::string& path);

}  // namespace mf
