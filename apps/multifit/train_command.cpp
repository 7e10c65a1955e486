// multifit train SPEC.json: one model, fitted and evaluated, with its result document: a run of one
// model in serial mode, through the same runner as `multifit run`.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "apps/multifit/cli_values.h"
#include "apps/multifit/commands.h"
#include "apps/multifit/output_files.h"
#include "apps/multifit/spec_reference.h"
#include "apps/multifit/summary_table.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"
#include "study/runner.h"

namespace mf {
namespace {

struct TrainArgs {
  RunOptions options;
  OutputFiles files;
  std::string save, load;
};

// Whether `path` holds a sweep where a spec belongs: its top level has "grid" or "models" (and no
// layers, which would make it a spec, as `multifit run` reads it). Asked only of a file that failed
// as a spec.
bool is_sweep_file(const std::string& path) {
  try {
    const nlohmann::json root = read_json_file(path, "spec");
    return root.is_object() && !root.contains("layers") &&
           (root.contains("grid") || root.contains("models") || root.contains("search"));
  } catch (const UserError&) {
    return false;
  }
}

// The one job: the spec with the overrides, or the reason it cannot be read (named after the file).
Job train_job(const TrainArgs& args) {
  const RunOptions& options = args.options;
  const std::string& path = options.models_path;
  Job job;
  job.name = std::filesystem::path(path).stem().string();  // until the spec names it
  job.load = args.load;
  job.save = args.save;
  try {
    job.spec = with_overrides(load_model_spec(path), options.overrides);
    job.name = job.spec->name;
    job.data = options.data.empty() ? job.spec->data : options.data;
  } catch (const UserError& e) {
    job.error =
        is_sweep_file(path)
            ? path +
                  " is a sweep; train one model with multifit train SPEC, or the sweep with multifit run " +
                  path
            : e.what();
  }
  return job;
}

int run_train(TrainArgs& args) {
  // Where a failure would be recorded, checked first: a document cannot be written there otherwise.
  prepare_output_files(args.files, {{"the spec", args.options.models_path}, {"--load", args.load}},
                       {{"--save", args.save}});
  args.options.timeline = !args.files.trace.empty();  // the steps' times, for the trace alone
  const std::vector<Job> jobs = {train_job(args)};
  int code = 0;
  const RunReport run =
      run_mode(*make_serial_mode(args.options), jobs, args.options, stop_on_interrupt(), &code);
  const ModelReport& report = run.models.front();
  // A model that failed says why in one line, on stderr, and no "NAME: failed" beside it; any
  // other gets its result's line (a diverged one, its error too).
  if (report.status != ModelStatus::failed || report.error.empty()) print_model_line(report);
  if (!report.error.empty() && code != 0)
    std::fprintf(stderr, "multifit: error: %s\n", report.error.c_str());
  return write_output_files({run}, args.files, code);
}

}  // namespace

Command add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  RunOptions& o = args->options;
  CLI::App* cmd = app.add_subcommand("train", "Train one model from a JSON spec and evaluate it");
  cmd->footer(spec_reference());
  cmd->add_option("spec", o.models_path, "Model spec (JSON), e.g. examples/fashion-mnist-mlp.json")
      ->required();
  add_data_option(*cmd, o.data);
  add_backend_options(*cmd, o.backend);
  add_output_options(*cmd, args->files);
  cmd->add_option("--save", args->save, "Save the trained weights here");
  cmd->add_option("--load", args->load, "Start from these weights (saved for the same spec)");
  cmd->add_flag("--quiet", o.quiet, "No per-epoch progress lines");
  add_spec_overrides(*cmd, o.overrides);
  return [args] { return run_train(*args); };
}

}  // namespace mf
