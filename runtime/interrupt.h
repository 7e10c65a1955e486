#pragma once
// Ctrl-C: the first SIGINT (or SIGTERM) asks the run to stop; models stop after their current step,
// report what they measured, and the result document is written. A second one ends the process at once.
#include <atomic>

namespace mf {

// Installs the handlers (once) and returns the flag they set.
const std::atomic<bool>& stop_on_interrupt();

}  // namespace mf
