#include "apps/multifit/mode_choice.h"

#include <cstdio>
#include <iostream>

#include "backends/factory.h"
#include "runtime/clock.h"
#include "runtime/formats.h"

namespace mf {

ModeKind choose_mode(const std::vector<ModeKind>& modes, const std::vector<Job>& jobs,
                     const RunOptions& options, const std::atomic<bool>& stop, int64_t steps,
                     nlohmann::json& record) {
  const Clock::time_point start = Clock::now();
  const std::vector<Calibration> calibrations = calibrate(modes, jobs, options, stop, steps);
  const double calibration_s = seconds_since(start);
  nlohmann::json measured = nlohmann::json::array();
  for (const Calibration& c : calibrations) {
    measured.push_back(
        {{"mode", to_string(c.mode)},
         {"startup_s", c.startup_s},
         {"samples_per_s", c.samples_per_s},
         {"predicted_wall_s", c.predicted_wall_s},
         {"unjudged", c.unjudged.empty() ? nlohmann::json() : nlohmann::json(c.unjudged)}});
    if (!options.quiet)
      std::fprintf(
          stderr,
          "multifit: auto: %-9s start-up %s, %.0f samples/s while training: the sweep in about %s\n",
          to_string(c.mode), format_duration(c.startup_s.value_or(0)).c_str(),
          c.samples_per_s.value_or(0),
          c.predicted_wall_s ? format_duration(*c.predicted_wall_s).c_str() : "(nothing trained)");
  }
  // The choice is said even when quiet: it is what the run's figures are of.
  const bool measured_any = calibrations.front().predicted_wall_s.has_value();
  const ModeKind mode = measured_any ? calibrations.front().mode : ModeKind::serial;
  if (measured_any)
    std::fprintf(
        stderr,
        "multifit: auto: %s, the fastest in a calibration of at most %lld steps per model (%s)\n",
        to_string(mode), (long long)steps, format_duration(calibration_s).c_str());
  else
    std::fprintf(
        stderr,
        "multifit: auto: serial: no model trained in the calibration (%s), so nothing tells the modes apart\n",
        format_duration(calibration_s).c_str());
  record = {{"mode", to_string(mode)},
            {"calibration_steps", steps},
            {"calibration_s", calibration_s},
            {"calibration", measured}};
  return mode;
}

double start_process(const BackendOptions& backend) {
  const Clock::time_point start = Clock::now();
  try {
    make_backend(backend, std::cerr);
  } catch (const std::exception&) {
  }
  return seconds_since(start);
}

}  // namespace mf
