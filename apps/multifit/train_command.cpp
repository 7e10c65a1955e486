// multifit train SPEC.json: one model, fitted and evaluated, with its result document.
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <new>
#include <optional>

#include "apps/multifit/backend_choice.h"
#include "apps/multifit/commands.h"
#include "apps/multifit/report.h"
#include "apps/multifit/spec_reference.h"
#include "data/dataset.h"
#include "nn/weights.h"
#include "runtime/bytes.h"
#include "runtime/clock.h"
#include "runtime/error.h"

namespace mf {
namespace {

struct TrainArgs {
  std::string spec, data, json, save, load;
  BackendOptions backend;
  bool quiet = false;
  // Overrides of the spec's settings, for trying one without a new spec file.
  std::optional<int> epochs, batch_size;
  std::optional<float> learning_rate;
  std::optional<uint64_t> seed;
};

// A float as its shortest decimal form (0.01f, not 0.009999999776).
double as_written(float x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.7g", x);
  return std::strtod(text, nullptr);
}

// The spec with the command line's overrides applied.
ModelSpec with_overrides(ModelSpec spec, const TrainArgs& args) {
  if (args.epochs) spec.fit.epochs = *args.epochs;
  if (args.batch_size) spec.fit.batch_size = *args.batch_size;
  if (args.learning_rate) spec.optimizer.learning_rate = *args.learning_rate;
  if (args.seed) spec.seed = *args.seed;
  return spec;
}

// No output may overwrite an input or the other output: --json over the spec would replace it.
void check_distinct_files(const TrainArgs& args) {
  namespace fs = std::filesystem;
  const std::pair<const char*, const std::string*> files[] = {
      {"the spec", &args.spec}, {"--load", &args.load}, {"--json", &args.json}, {"--save", &args.save}};
  for (size_t out = 2; out < 4; ++out)
    for (size_t other = 0; other < out; ++other) {
      const std::string& a = *files[out].second;
      const std::string& b = *files[other].second;
      std::error_code error;
      if (!a.empty() && !b.empty() && fs::weakly_canonical(a, error) == fs::weakly_canonical(b, error))
        throw UserError(std::string(files[out].first) + " " + a + ": is also " + files[other].first +
                        "; give the output its own file");
    }
}

// An output file's folder must exist and be writable before any work starts, so that a run never
// trains for nothing. Throws UserError naming the flag and the path.
void check_output_path(const char* flag, const std::string& path) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path parent = fs::absolute(path, error).parent_path();
  if (fs::is_directory(path, error))
    throw UserError(std::string(flag) + " " + path + ": is a folder; give a file name");
  if (!fs::is_directory(parent, error))
    throw UserError(std::string(flag) + " " + path + ": the folder " + parent.string() + " does not exist");
  if (access(parent.c_str(), W_OK) != 0)
    throw UserError(std::string(flag) + " " + path + ": the folder " + parent.string() + " is not writable");
}

void print_summary(const ModelReport& m) {
  if (m.status != ModelStatus::ok) {
    std::printf("%s: %s\n", m.name.c_str(), to_string(m.status));
    return;
  }
  std::string test = "no test set";
  if (!std::isnan(m.test.loss)) {
    test = "test_loss " + format_metric(m.test.loss);
    if (!std::isnan(m.test.accuracy)) test += " - test_accuracy " + format_metric(m.test.accuracy);
  }
  std::printf("%s: %s - %zu epochs in %s - peak memory %s\n", m.name.c_str(), test.c_str(), m.fit.epochs.size(),
              format_duration(m.fit.train_s).c_str(), format_bytes(m.memory.peak_bytes).c_str());
}

// Every stage of one model, from reading its spec to saving its weights: loads,
// builds, fits and evaluates. Any failure is recorded in the report (status oom
// or failed) so that the result document is still written; returns the exit
// code: 0, 2 for a user's mistake, 1 for a failure of the machine. A model that
// trained well keeps its status if saving its weights then fails. Start-up
// (device context, data loading and upload, model build) is measured apart
// from training.
int train_model(const TrainArgs& args, RunReport& run, ModelReport& report) {
  report.name = std::filesystem::path(args.spec).stem().string();  // until the spec names it
  try {
    check_output_path("--save", args.save);
    const ModelSpec spec = with_overrides(load_model_spec(args.spec), args);
    report.name = spec.name;
    report.settings = {{"optimizer", to_string(spec.optimizer.kind)}, {"learning_rate", as_written(spec.optimizer.learning_rate)},
                       {"epochs", spec.fit.epochs},    {"batch_size", spec.fit.batch_size},
                       {"validation_split", spec.fit.validation_split}, {"shuffle", spec.fit.shuffle},
                       {"seed", spec.seed}};
    report.params = Model::param_count(spec);
    report.memory.cap_bytes = spec.memory.limit_bytes;
    report.has_accuracy = has_accuracy(spec);

    const Clock::time_point startup = Clock::now();
    std::unique_ptr<Backend> backend = make_backend(args.backend, std::cerr);
    run.backend = backend->name();
    run.device = backend->device();
    const std::string source = args.data.empty() ? spec.data : args.data;
    const DataSplit data = load_data(source, spec.targets);
    run.data = data.description;
    DeviceData train(*backend, data.train);
    std::optional<DeviceData> test;
    if (data.test) test.emplace(*backend, *data.test);
    run.data_bytes = train.bytes() + (test ? test->bytes() : 0);
    check_data(spec, train, data.train, "training data '" + source + "'");
    if (test) check_data(spec, *test, *data.test, "test data '" + source + "'");
    const int64_t train_rows = training_rows(spec, train.rows());
    const MemoryPlan plan = training_plan(spec, train_rows);
    report.plan = plan.parts;  // also when over the cap
    check_plan_fits(spec, plan);  // before the pool takes anything
    Model model(spec, *backend);
    if (!args.load.empty()) load_weights(model, args.load);
    backend->synchronize();
    run.startup_s = seconds_since(startup);

    report.validated = train_rows < train.rows();
    report.fit = fit(model, train, {args.quiet ? nullptr : &std::cerr, ""});
    report.fitted = true;
    if (report.fit.status == FitStatus::diverged) {
      report.status = ModelStatus::diverged;
      report.error = report.fit.diverged + "; lower optimizer.learning_rate";
    }
    if (test && report.status == ModelStatus::ok) {
      report.test = evaluate(model, *test, 0, test->rows());
      report.tested = true;
      const std::string bad = non_finite(report.test, "test");
      if (!bad.empty()) {
        report.status = ModelStatus::diverged;
        report.error = "evaluation: " + bad + "; lower optimizer.learning_rate";
      }
    }
    report.memory = model.pool_stats();
    const int64_t samples = train_rows * int64_t(report.fit.epochs.size());
    if (report.fit.train_s > 0) run.samples_per_s = double(samples) / report.fit.train_s;
    if (!args.save.empty()) {
      try {
        save_weights(model, args.save);
      } catch (const std::exception& e) {  // the folder was writable at the start: the machine failed
        report.error = std::string("--save: ") + e.what();
        return 1;
      }
    }
  } catch (const OutOfMemory& e) {
    report.status = ModelStatus::oom;
    report.error = e.what();
    return 2;
  } catch (const std::bad_alloc&) {  // data sets and other host buffers outside the pools
    report.status = ModelStatus::oom;
    report.error = "out of host memory outside the model's pool (data sets, buffers); use less data, or raise the "
                   "process's memory limit (ulimit -v) if one is set";
    return 2;
  } catch (const UserError& e) {
    report.status = ModelStatus::failed;
    report.error = e.what();
    return 2;
  } catch (const std::exception& e) {
    report.status = ModelStatus::failed;
    report.error = e.what();
    return 1;
  }
  return report.status == ModelStatus::ok ? 0 : 1;
}

int run_train(const TrainArgs& args) {
  const Clock::time_point wall = Clock::now();
  // Where a failure would be recorded, checked first: a document cannot be written there otherwise.
  check_output_path("--json", args.json);
  check_distinct_files(args);
  RunReport run;
  ModelReport report;
  const int code = train_model(args, run, report);
  run.models.push_back(report);
  run.wall_s = seconds_since(wall);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  run.host_peak_rss_bytes = size_t(usage.ru_maxrss) * 1024;  // Linux reports KiB
  print_summary(report);
  if (!report.error.empty() && code != 0) std::fprintf(stderr, "multifit: error: %s\n", report.error.c_str());
  if (!args.json.empty()) write_json(run, args.json);
  return code;
}

// A whole number from `low` to `high` (the spec's rules for fit.epochs and fit.batch_size).
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

// A float > 0 that stays finite and above 0 as a float (the spec's rule for learning_rate).
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

// A seed: a whole number from 0 to 2^64 - 1, digits only (so -1 does not wrap around).
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

}  // namespace

Command add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand("train", "Train one model from a JSON spec and evaluate it");
  cmd->footer(kSpecReference);
  cmd->add_option("spec", args->spec, "Model spec (JSON), e.g. examples/fashion-mnist-mlp.json")->required();
  cmd->add_option("--data", args->data,
                  "fashion-mnist | mnist:DIR | csv:TRAIN[,TEST] | synthetic:KIND[:key=value,...]; "
                  "default: the spec's data");
  cmd->add_option("--backend", args->backend.name,
                  "auto picks cuda when a device is usable, else cpu; host-exec runs the CUDA kernels on the "
                  "CPU, one OS thread per CUDA thread (slow: for checking and teaching)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda", "host-exec"}))
      ->capture_default_str();
  cmd->add_option("--gemm", args->backend.gemm, "CUDA products: tiled (our kernels) or cublas (reference)")
      ->check(CLI::IsMember({"tiled", "cublas"}))
      ->capture_default_str();
  cmd->add_option("--activations", args->backend.activations,
                  "CUDA activations and softmax: ours (our kernels) or cudnn (reference)")
      ->check(CLI::IsMember({"ours", "cudnn"}))
      ->capture_default_str();
  cmd->add_option("--json", args->json, "Write the result document here");
  cmd->add_option("--save", args->save, "Save the trained weights here");
  cmd->add_option("--load", args->load, "Start from these weights (saved for the same spec)");
  cmd->add_flag("--quiet", args->quiet, "No per-epoch progress lines");
  cmd->add_option("--epochs", args->epochs, "Override fit.epochs (0 builds, evaluates and saves)")
      ->check(whole_number(0, INT_MAX));
  cmd->add_option("--batch-size", args->batch_size, "Override fit.batch_size")->check(whole_number(1, INT_MAX));
  cmd->add_option("--learning-rate", args->learning_rate, "Override optimizer.learning_rate")
      ->check(positive_float());
  cmd->add_option("--seed", args->seed, "Override seed")->check(seed_number());
  return [args] { return run_train(*args); };
}

}  // namespace mf
