// Two models from their specs, trained side by side on two streams, then each alone: how much did
// sharing the machine slow each down? multifit's study as a library (study/runner.h), what
// `multifit run SWEEP --mode streams --solo` does, without the command line.
//
//   usage: two_models [--backend cpu|host-exec|cuda|auto]   (default cpu: no GPU needed)
#include <atomic>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/factory.h"
#include "nn/spec.h"
#include "nn/sweep.h"
#include "study/job.h"
#include "study/modes/mode.h"
#include "study/runner.h"

// Specs as `multifit train` reads them from a file (nn/spec.h), on synthetic data: no data set
// needed.
const char* const kSpecs = R"([
  {"name": "classifier", "data": "synthetic:binary:rows=16384", "input": 20,
   "layers": [{"units": 64, "activation": "relu"}, {"units": 1, "activation": "sigmoid"}],
   "loss": "binary_crossentropy", "optimizer": {"name": "adam"},
   "fit": {"epochs": 3, "batch_size": 64}, "seed": 1},
  {"name": "regressor", "data": "synthetic:regression:rows=16384", "input": 20,
   "layers": [{"units": 32, "activation": "relu"}, {"units": 1}],
   "loss": "mse", "optimizer": {"name": "adam"},
   "fit": {"epochs": 3, "batch_size": 32}, "seed": 2}
])";

int main(int argc, char** argv) {
  mf::RunOptions options;
  options.backend.kind = mf::BackendKind::cpu;
  options.quiet = true;  // no per-epoch lines
  for (int i = 1; i < argc; ++i) {
    const auto kind = i + 1 < argc ? mf::find_named(mf::kBackendNames, argv[i + 1]) : std::nullopt;
    if (std::string(argv[i]) == "--backend" && kind) {
      options.backend.kind = *kind;
      ++i;
    } else {
      std::fprintf(stderr, "usage: two_models [--backend cpu|host-exec|cuda|auto]\n");
      return 2;
    }
  }
  try {
    // auto: cuda where a GPU is, else cpu
    options.backend = mf::resolve_auto(options.backend, std::cerr);

    // A sweep of the two specs (nn/sweep.h; load_sweep reads one from a file), and a job for each.
    mf::Sweep sweep;
    sweep.name = "two-models";
    for (const nlohmann::json& spec : nlohmann::json::parse(kSpecs)) {
      mf::SweepEntry entry;
      entry.name = spec["name"];
      entry.spec = mf::parse_model_spec(spec, "two_models.cpp");
      sweep.models.push_back(std::move(entry));
    }
    const std::vector<mf::Job> jobs = mf::make_jobs(sweep, options);

    // Both at once, each on its own thread, backend and stream; then each alone, one after the
    // other.
    // nothing stops them early (multifit's CLI stops them on Ctrl-C)
    const std::atomic<bool> stop = false;
    int exit_code = 0;
    mf::RunReport streams =
        mf::run_mode(*mf::make_streams_mode(options), jobs, options, stop, &exit_code);
    const mf::RunReport serial =
        mf::run_mode(*mf::make_serial_mode(options), jobs, options, stop, &exit_code);
    // each model's slowdown: its time on streams over its time alone
    mf::compare_with_serial(streams, serial);

    std::printf("%s backend%s%s\n", mf::to_string(options.backend.kind),
                streams.device_name.empty() ? "" : ", ", streams.device_name.c_str());
    for (const mf::ModelReport& m : streams.models) {
      if (!m.slowdown) {
        std::printf("%-10s %s: %s\n", m.name.c_str(), mf::to_string(m.status), m.error.c_str());
        continue;
      }
      std::printf("%-10s streams %.3f s, alone %.3f s: slowdown %.2fx\n", m.name.c_str(),
                  m.fit.train_s, *m.solo_s, *m.slowdown);
    }
    if (streams.speedup_vs_serial)
      std::printf("both: streams %.3f s, serial %.3f s: speedup %.2fx\n", streams.wall_s,
                  serial.wall_s, *streams.speedup_vs_serial);
    return exit_code;
  } catch (const std::exception& e) {  // a bad spec, say: a UserError of one line
    std::fprintf(stderr, "two_models: %s\n", e.what());
    return 2;
  }
}
