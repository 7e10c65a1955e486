#include "study/modes/mode.h"

#include <stdexcept>

namespace mf {

std::unique_ptr<Mode> make_mode(ModeKind kind, const RunOptions& options) {
  switch (kind) {
    case ModeKind::serial:
      return make_serial_mode(options);
    case ModeKind::streams:
      return make_streams_mode(options);
    case ModeKind::processes:
      return make_processes_mode(options);
    case ModeKind::packed:
      return make_packed_mode(options);
  }
  throw std::logic_error("make_mode: no such mode");
}

}  // namespace mf
