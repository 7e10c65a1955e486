#pragma once
// `multifit run`'s start before its modes: the process's one-time start-up, and --mode auto's
// calibration and the mode it chooses.
#include <atomic>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "study/runner.h"

namespace mf {

// Runs --mode auto's calibration of `modes` on `jobs` (at most `steps` training steps per model),
// says on stderr what each mode measured and which it picks and why, and returns that mode (serial
// when no model trained). `record` gets the calibration and the choice, as the document's `auto`.
ModeKind choose_mode(const std::vector<ModeKind>& modes, const std::vector<Job>& jobs,
                     const RunOptions& options, const std::atomic<bool>& stop, int64_t steps,
                     nlohmann::json& record);

// The process's one-time start-up: the backend's libraries loaded, on a GPU the CUDA context made.
// Done once before the in-process modes, so that the first of them (serial) does not pay for the
// others; a failure is left for each model to report. Returns its seconds.
double start_process(const BackendOptions& backend);

}  // namespace mf
