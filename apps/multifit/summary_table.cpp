#include "apps/multifit/summary_table.h"

#include <cmath>
#include <cstdio>

#include "runtime/bytes.h"

namespace mf {
namespace {

std::string seconds(const std::optional<double>& s) { return s ? format_duration(*s) : "-"; }
std::string times(const std::optional<double>& x) {
  if (!x) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", *x);
  return text;
}
std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", 100 * fraction);
  return text;
}

}  // namespace

void print_model_line(const ModelReport& m) {
  if (m.status != ModelStatus::ok) {
    std::printf("%s: %s\n", m.name.c_str(), to_string(m.status));
    return;
  }
  std::string test = "no test set";
  if (m.tested) {
    test = "test_loss " + format_metric(m.test.loss);
    if (m.has_accuracy) test += " - test_accuracy " + format_metric(m.test.accuracy);
  }
  std::printf("%s: %s - %zu epochs in %s - peak memory %s\n", m.name.c_str(), test.c_str(), m.fit.epochs.size(),
              format_duration(m.fit.train_s).c_str(), format_bytes(m.memory.peak_bytes).c_str());
}

void print_run_table(const RunReport& run) {
  std::printf("\n%s: %zu models, at most %d at once - wall %s (start-up %s) - %.0f samples/s", run.mode.c_str(),
              run.models.size(), run.concurrency, format_duration(run.wall_s).c_str(), seconds(run.startup_s).c_str(),
              run.samples_per_s.value_or(0));
  if (run.speedup_vs_serial) std::printf(" - speedup vs serial %s", times(run.speedup_vs_serial).c_str());
  if (run.overlap) std::printf(" - overlap %s", percent(run.overlap->fraction()).c_str());
  std::printf("\n  %-28s %-8s %9s %9s %9s %9s %9s %10s\n", "model", "status", "start-up", "train", "solo", "slowdown",
              "test acc", "peak mem");
  for (const ModelReport& m : run.models) {
    const std::string accuracy = m.tested && m.has_accuracy ? format_metric(m.test.accuracy)
                                 : m.tested                 ? "loss " + format_metric(m.test.loss)
                                                            : "-";
    std::printf("  %-28s %-8s %9s %9s %9s %9s %9s %10s\n", m.name.c_str(), to_string(m.status),
                seconds(m.startup_s).c_str(), m.fitted ? format_duration(m.fit.train_s).c_str() : "-",
                seconds(m.solo_s).c_str(), times(m.slowdown).c_str(), accuracy.c_str(),
                format_bytes(m.memory.peak_bytes).c_str());
    if (!m.error.empty()) std::printf("    %s\n", m.error.c_str());
  }
}

void print_modes_table(const std::vector<RunReport>& runs) {
  std::printf("\nmodes side by side (%zu models):\n  %-10s %9s %9s %12s %9s %8s %14s\n", runs.front().models.size(),
              "mode", "wall", "start-up", "samples/s", "speedup", "overlap", "mean slowdown");
  for (const RunReport& run : runs) {
    double slowdown = 0;
    int counted = 0;
    for (const ModelReport& m : run.models)
      if (m.slowdown) slowdown += *m.slowdown, ++counted;
    const std::optional<double> mean = counted ? std::optional<double>(slowdown / counted) : std::nullopt;
    std::printf("  %-10s %9s %9s %12.0f %9s %8s %14s\n", run.mode.c_str(), format_duration(run.wall_s).c_str(),
                seconds(run.startup_s).c_str(), run.samples_per_s.value_or(0), times(run.speedup_vs_serial).c_str(),
                run.overlap ? percent(run.overlap->fraction()).c_str() : "-", times(mean).c_str());
  }
}

}  // namespace mf
