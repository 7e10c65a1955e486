#pragma once
// Every file multifit reads (specs, data, weights) is checked before it is
// opened: it must be a regular file of bounded size. A folder, a device such as
// /dev/zero or a pipe that never ends would otherwise fail late or hang.
#include <cstdint>
#include <string>

namespace mf {

// Data files (CSV, IDX) up to 64 GiB: a data set must also fit in memory as floats.
constexpr uintmax_t kMaxDataFileBytes = uintmax_t(64) << 30;

// Throws UserError naming `path`, what it is (missing, a folder, a device, a pipe or socket, too
// large) and what is allowed; `what` names the kind of file ("spec", "CSV file").
void check_input_file(const std::string& path, const std::string& what, uintmax_t max_bytes);

}  // namespace mf
