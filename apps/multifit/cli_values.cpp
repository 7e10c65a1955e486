#include "apps/multifit/cli_values.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "runtime/bytes.h"
#include "runtime/error.h"
#include "runtime/machine_resources.h"

namespace mf {

CLI::Validator whole_number(long long low, long long high) {
  const std::string rule =
      "a whole number from " + std::to_string(low) + " to " + std::to_string(high);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long long value = std::strtoll(text.c_str(), &end, 10);
        const bool ok =
            end != text.c_str() && *end == '\0' && errno == 0 && value >= low && value <= high;
        return ok ? "" : "got " + text + "; expected " + rule;
      },
      "");  // the type says INT
}

CLI::Validator positive_float() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const float value = std::strtof(text.c_str(), &end);
        const bool ok = end != text.c_str() && *end == '\0' && std::isfinite(value) && value > 0.f;
        return ok ? ""
                  : "got " + text +
                        "; expected a finite number > 0 (as a float: 1.2e-38 to 3.4e38)";
      },
      "");  // the type says FLOAT
}

CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        std::strtoull(text.c_str(), &end, 10);
        const bool digits =
            !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        return digits && errno == 0
                   ? ""
                   : "got " + text + "; expected a whole number from 0 to 18446744073709551615";
      },
      "");  // the type says UINT
}

CLI::Validator size_with_unit() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        // parse_bytes reads a bare number as bytes (the spec's rule); here the unit is required.
        const bool has_unit =
            !text.empty() && std::isalpha(static_cast<unsigned char>(text.back()));
        std::optional<size_t> bytes;
        if (has_unit) try {
            bytes = parse_bytes(text, "");
          } catch (const UserError&) {
          }
        if (bytes && *bytes > 0) {  // "0.1B" rounds to no bytes at all
          text = std::to_string(*bytes);
          return "";
        }
        char* end = nullptr;
        std::strtod(text.c_str(), &end);
        const bool bare_number = !text.empty() && *end == '\0';
        return "got " + text + (bare_number ? ", a number without a unit" : "") +
               "; expected a size with its unit, " + size_units() + ", like 64MiB";
      },
      "");
}

std::string read_shard(const std::string& text, Shard& shard) {
  // a sweep's most models: more parts would all be empty
  constexpr size_t kMostParts = size_t(1) << 20;
  const std::string form =
      "; expected I/N, the part I of N parts: two whole numbers, 0 <= I < N (0-based, as a Slurm array's %a with --array=0-(N-1))";
  const size_t slash = text.find('/');
  const auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 18 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (slash == std::string::npos || !digits(text.substr(0, slash)) ||
      !digits(text.substr(slash + 1)))
    return "got " + text + form;
  shard = {size_t(std::stoull(text.substr(0, slash))), size_t(std::stoull(text.substr(slash + 1)))};
  if (shard.count < 1 || shard.count > kMostParts)
    return "got " + text + "; expected N, the count of parts, from 1 to " +
           std::to_string(kMostParts) + " (a sweep's most models)";
  if (shard.index >= shard.count)
    return "got " + text + "; expected I from 0 to " + std::to_string(shard.count - 1) + " for " +
           std::to_string(shard.count) + " parts (0-based, as a Slurm array's %a with --array=0-" +
           std::to_string(shard.count - 1) + ")";
  return "";
}

CLI::Validator shard_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        Shard shard;
        return read_shard(text, shard);
      },
      "");
}

void add_spec_overrides(CLI::App& cmd, SpecOverrides& overrides) {
  cmd.add_option("--epochs", overrides.epochs,
                 "Override fit.epochs (0: no training, the initial weights evaluated)")
      ->check(whole_number(0, INT_MAX));
  cmd.add_option("--batch-size", overrides.batch_size, "Override fit.batch_size")
      ->check(whole_number(1, INT_MAX));
  cmd.add_option("--learning-rate", overrides.learning_rate,
                 "Override optimizer.learning_rate: a constant rate, in place of a schedule")
      ->check(positive_float());
  cmd.add_option(
         "--seed", overrides.seed,
         "Override seed, which draws the initial weights, each epoch's shuffle and Dropout's masks; synthetic data has a seed of its own (--data synthetic:KIND:seed=N)")
      ->check(seed_number());
  cmd.add_option("--memory-limit", overrides.memory_limit,
                 "Override memory.limit: a size with its unit (" + size_units() + "), e.g. 64MiB")
      ->transform(size_with_unit())
      ->type_name("SIZE");
  cmd.add_option(
         "--memory", overrides.memory_mode,
         "Override memory.mode: grow takes memory as needed, reserve takes the limit at once")
      ->transform(one_of(kPoolModeNames));
}

void add_data_option(CLI::App& cmd, std::string& data) {
  cmd.add_option(
      "--data", data,
      "The data source instead of the spec's data (every model's, for a sweep): fashion-mnist | mnist:DIR | csv:TRAIN[,TEST] | npy:X,Y[,XTEST,YTEST] | synthetic:KIND[:key=value,...] with KIND binary, regression or teacher and keys rows, features, classes (teacher), seed (the data's own, 1234 unless given: the spec's seed and --seed do not change it)");
}

void add_backend_options(CLI::App& cmd, BackendOptions& backend) {
  add_named_option(
      cmd, "--backend", backend.kind, kBackendNames,
      "auto picks cuda when a device is usable, else cpu; host-exec runs the CUDA kernels on the CPU, one OS thread per CUDA thread (slow: for checking and teaching)");
  add_named_option(cmd, "--gemm", backend.gemm, kGemmImplNames,
                   "CUDA products: tiled (our kernels) or cublas (reference)");
  add_named_option(cmd, "--activations", backend.activations, kActivationImplNames,
                   "CUDA activations and softmax: ours (our kernels) or cudnn (reference)");
  add_named_option(
      cmd, "--graphs", backend.graphs, kGraphsNames,
      "Each training step recorded once and replayed: a CUDA graph on a GPU (one launch a step), on the cpu a recorded step (a pack's members each run their whole step, spread over the threads): on, off, or auto (on, but for host-exec, which emulates CUDA graphs)");
  backend.threads = usable_cores();
  cmd.add_option(
         "--threads", backend.threads,
         "The run's cores for the cpu backend, 1 to 4096 (default: the cores this process may use, " +
             std::to_string(backend.threads) +
             " here), which every mode shares: a model alone spreads a step over them where that measures faster, a pack spreads its members over them, and models trained at once share them, one each when they are more")
      ->check(whole_number(1, 4096));
}

}  // namespace mf
