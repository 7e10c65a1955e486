#include "runtime/process_memory.h"

#include <fstream>
#include <string>

namespace mf {

size_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  size_t kib = 0;
  while (status >> key) {
    if (key == "VmHWM:" && status >> kib) return kib * 1024;
    status.ignore(4096, '\n');
  }
  return 0;
}

}  // namespace mf
