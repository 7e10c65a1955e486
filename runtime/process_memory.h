#pragma once
#include <cstddef>

namespace mf {

// This process's peak resident memory, VmHWM of /proc/self/status; 0 when unknown. Unlike
// getrusage's ru_maxrss it starts afresh at exec, so a worker started by posix_spawn does not
// inherit its parent's peak.
size_t peak_resident_bytes();

}  // namespace mf
