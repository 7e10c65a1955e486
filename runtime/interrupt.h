#pragma once
// Ctrl-C: the first SIGINT (or SIGTERM) asks the run to stop; models stop after their current step,
// report what they measured, and the result document is written. A second one ends the process at
// once.
#include <atomic>

namespace mf {

// Installs the handlers (once) and returns the flag they set. After leave_signals_to_embedder() it
// installs none: the flag is set by request_stop() alone.
const std::atomic<bool>& stop_on_interrupt();

// For a program that embeds multifit and keeps its own signal handlers (the Python package: Python
// turns SIGINT into KeyboardInterrupt): stop_on_interrupt() installs nothing from then on, and the
// embedder asks a run to stop with request_stop() and clears the flag with clear_stop() before the
// next one. Call it before the first stop_on_interrupt().
void leave_signals_to_embedder();
void request_stop();
void clear_stop();

}  // namespace mf
