#include "apps/multifit/cli_values.h"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>

namespace mf {

CLI::Validator whole_number(long long low, long long high) {
  const std::string rule = "a whole number from " + std::to_string(low) + " to " + std::to_string(high);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long long value = std::strtoll(text.c_str(), &end, 10);
        const bool ok = end != text.c_str() && *end == '\0' && errno == 0 && value >= low && value <= high;
        return ok ? "" : "got " + text + "; expected " + rule;
      },
      "INT");
}

CLI::Validator positive_float() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const float value = std::strtof(text.c_str(), &end);
        const bool ok = end != text.c_str() && *end == '\0' && std::isfinite(value) && value > 0.f;
        return ok ? "" : "got " + text + "; expected a finite number > 0 (as a float: 1.2e-38 to 3.4e38)";
      },
      "FLOAT");
}

CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        std::strtoull(text.c_str(), &end, 10);
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        return digits && errno == 0 ? "" : "got " + text + "; expected a whole number from 0 to 18446744073709551615";
      },
      "UINT");
}

void add_fit_overrides(CLI::App& cmd, SpecOverrides& overrides) {
  cmd.add_option("--epochs", overrides.epochs, "Override fit.epochs (0: no training, the initial weights evaluated)")
      ->check(whole_number(0, INT_MAX));
  cmd.add_option("--batch-size", overrides.batch_size, "Override fit.batch_size")->check(whole_number(1, INT_MAX));
}

void add_backend_options(CLI::App& cmd, BackendOptions& backend) {
  add_named_option(cmd, "--backend", backend.kind, kBackendNames,
                   "auto picks cuda when a device is usable, else cpu; host-exec runs the CUDA kernels on the "
                   "CPU, one OS thread per CUDA thread (slow: for checking and teaching)");
  add_named_option(cmd, "--gemm", backend.gemm, kGemmImplNames, "CUDA products: tiled (our kernels) or cublas (reference)");
  add_named_option(cmd, "--activations", backend.activations, kActivationImplNames,
                   "CUDA activations and softmax: ours (our kernels) or cudnn (reference)");
  add_named_option(cmd, "--graphs", backend.graphs, kGraphsNames,
                   "Each training step as a CUDA graph, captured once and replayed (one launch a step): on, off, "
                   "or auto (on a GPU); host-exec emulates graphs, the cpu has none");
}

}  // namespace mf
