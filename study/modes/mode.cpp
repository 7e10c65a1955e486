#include "study/modes/mode.h"

namespace mf {

std::unique_ptr<Mode> make_mode(const std::string& name, const RunOptions& options) {
  if (name == "streams") return make_streams_mode(options);
  if (name == "processes") return make_processes_mode(options);
  if (name == "packed") return make_packed_mode(options);
  return make_serial_mode(options);
}

}  // namespace mf
