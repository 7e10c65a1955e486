// `multifit run`'s flags. Each help text says what the flag does, its unit and its default; the
// checks here are each flag's alone (apps/multifit/run_plan.h checks them together).
#include "apps/multifit/run_flags.h"

#include <climits>
#include <cmath>
#include <cstdlib>

#include "apps/multifit/cli_values.h"
#include "study/modes/mode.h"
#include "study/report/ranking.h"

namespace mf {
namespace {

// --mode: one of the modes, all (the four in turn) or auto (the fastest in a calibration).
std::vector<std::string> mode_choices() {
  std::vector<std::string> names;
  for (const Named<ModeKind>& mode : kModeNames) names.push_back(mode.name);
  names.insert(names.end(), {"all", "auto"});
  return names;
}

// How the models run: the mode and what shapes it.
void add_mode_flags(CLI::App* cmd, RunArgs& args) {
  RunOptions& o = args.options;
  cmd->add_option(
         "--mode", args.mode,
         "serial: one model after another; streams: one thread and stream per model; processes: one process per model; packed: models of one shape and fit (layers, loss, optimizer kind, batch size, epochs, data, memory mode) trained together in shared kernels; all: the four in turn; auto: the fastest in a short calibration on the sweep's own models")
      ->check(CLI::IsMember(mode_choices()))
      ->type_name("ENUM")
      ->capture_default_str();
  cmd->add_option(
         "--pack-size", o.pack_size,
         "--mode packed: at most N models in a pack (0: none on a GPU, on the cpu a pack per thread)")
      ->check(whole_number(0, int(kMaxPackSize)))
      ->capture_default_str();
  cmd->add_option(
         "--concurrency", o.concurrency,
         "At most K models at once, the rest in later phases (0: all at once). Default: as many as the machine holds (memory, and for processes cores, open files, processes), said on stderr when fewer than all; above that bound K runs as asked, with a warning")
      ->check(whole_number(0, INT_MAX));
  cmd->add_option(
         "--stall-timeout", o.stall_timeout_s,
         "--mode processes: a worker that takes no training step for SECONDS (or uses no CPU while it builds) is killed and its model failed as stalled (0: never). Default: 10 times its slowest epoch so far, never under 60")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            char* end = nullptr;
            const double value = std::strtod(text.c_str(), &end);
            const bool ok =
                end != text.c_str() && *end == '\0' && std::isfinite(value) && value >= 0;
            return ok ? "" : "got " + text + "; expected a number of seconds, 0 or more (0: never)";
          },
          ""))
      ->type_name("SECONDS");
  cmd->add_flag(
      "--keep-pools", o.keep_pools,
      "--mode serial: keep every model's pool until the last model has trained, as a Keras loop without clear_session() keeps its models' memory (each model's in_use_before_release_bytes then shows what the run held when it ended)");
  cmd->add_option(
         "--inject-fault", o.inject_fault,
         "Make a real fault in the model NAME after its first epoch, to see what it takes down with it: on the CPU its thread gets SIGSEGV (the process ends, as at a stray pointer), on a GPU a kernel writes to an illegal address (the sticky error poisons the process's CUDA context). One --mode, not all or auto, without --solo: a fault in an in-process run on the CPU ends the run")
      ->check(CLI::Validator(
          [](std::string& name) -> std::string {
            if (name.empty()) return "the name of a model of the sweep, not empty";
            return name.starts_with("-")
                       ? "the model NAME, " + name + ", looks like a flag: give a model's name"
                       : "";
          },
          ""))  // no name: CLI11 would print it after the type's, "NAME:NAME"
      ->type_name("NAME");
  cmd->add_option("--calibration-steps", args.calibration_steps,
                  "--mode auto: training steps per model in each mode's calibration")
      ->check(whole_number(1, INT_MAX))
      ->capture_default_str();
  cmd->add_flag("--solo", args.solo,
                "Run each model alone first, for its slowdown (--mode all has it)");
  cmd->add_option(
         "--repeat", args.repeat,
         "Run the modes N times, interleaved (serial, streams, ..., serial, streams, ...), and report each figure's median, min and max: one run on a shared machine can mislead. Keeps no journal")
      ->check(whole_number(1, 100))
      ->capture_default_str();
  cmd->add_option("--devices", o.devices, "GPUs to spread the models over, round robin, e.g. 0,1")
      ->delimiter(',')
      ->check(whole_number(0, 1023));
}

// How the models share the GPU's SMs: MPS between processes, green contexts in one process.
void add_device_share_flags(CLI::App* cmd, RunOptions& o) {
  cmd->add_option(
         "--mps", o.mps,
         "--mode processes on the cuda backend: run the workers under CUDA's Multi-Process Service, whose processes' kernels may run at once. on: the control daemon running, or one started for the run in a private folder and stopped at its end; off: the workers kept from any daemon, the GPU time-slices them; auto: a daemon already running is used, none is started")
      ->transform(one_of(kMpsUseNames))
      ->default_str("auto");
  cmd->add_option(
         "--sm-share", o.sm_share,
         "--mode processes under MPS: each worker's kernels may occupy at most P percent of the GPU's SMs (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; a spec's \"device\" \"sm_share\" is its model's own). Default: all of them")
      ->check(whole_number(1, 100))
      ->type_name("P");
  cmd->add_option(
         "--sm-partitions", o.sm_partitions,
         "--mode streams or packed on the cuda backend: split the GPU's SMs into N disjoint green contexts, model (packed: pack) i on partition i % N (a spec's \"device\" \"sms\" gives its model its own). Default: none, every model on the whole GPU")
      ->check(whole_number(1, 1024))
      ->type_name("N");
}

// What is kept of the run: the ranking, the best models' weights, the journal, the shard.
void add_keeping_flags(CLI::App* cmd, RunArgs& args) {
  RunOptions& o = args.options;
  cmd->add_option(
         "--rank-by", o.rank_by,
         "Rank the models by this metric (default: val_accuracy where models were validated, else val_loss, test_accuracy, test_loss, the last epoch's training loss, the first some model has; train_s only when asked); a run of more than 24 models prints its best and worst 5")
      ->transform(one_of(kRankByNames));
  cmd->add_option(
         "--save-best", args.save_best,
         "Keep the weights of the best K models by the ranking (--rank-by) in the folder DIR (made when missing): NAME.weights, as train --save writes them, beside NAME.spec.json, its spec (train DIR/NAME.spec.json --load DIR/NAME.weights --epochs 0 evaluates one), and best.json, which lists them by rank with their metric and settings. NAME is the model's name, each byte other than a letter, digit or ._-+= written %XX. While the run goes, each model that ends ok stages its weights in DIR/.staging and only those that may still be among the best stay there. Any --mode but all")
      ->check(whole_number(1, INT_MAX).application_index(0))
      ->check(CLI::Validator(
                  [](std::string& dir) {
                    return dir.starts_with("-")
                               ? "the folder DIR, " + dir + ", looks like a flag: give K, then DIR"
                               : "";
                  },
                  "")  // no name, as --inject-fault's
                  .application_index(1))
      ->type_name("K DIR");
  cmd->add_option(
      "--journal", args.journal,
      "Record each model here as it ends, one JSON line each (default: OUT.journal beside --json OUT), so that --resume can finish the run");
  cmd->add_option_function<std::string>(
         "--shard", [&args](const std::string& text) { read_shard(text, args.shard.emplace()); },
         "Train only part I of N of the sweep: its models at places I, I+N, I+2N, ... (0 <= I < N, 0-based as a Slurm array's %a with --array=0-(N-1)); the document holds those models and names the sweep and the shard, and multifit merge makes the parts' documents one")
      ->check(shard_value())
      ->type_name("I/N");
  cmd->add_flag(
      "--resume", args.resume,
      "Finish an interrupted run: skip the models its journal (--journal, or --json OUT's) records as ended, train the rest, write the whole document");
}

}  // namespace

CLI::App* add_run_flags(CLI::App& app, RunArgs& args) {
  RunOptions& o = args.options;
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Train a sweep of models serially, on streams, as processes or packed into shared kernels, and measure how they share the machine");
  cmd->add_option(
         "sweep", o.models_path,
         "Sweep file (JSON: a base spec and grid axes or a search space, or a list of models; any with a scheduler), or one model's spec; e.g. examples/fashion-mnist-grid.json")
      ->required();
  add_mode_flags(cmd, args);
  add_device_share_flags(cmd, o);
  add_backend_options(*cmd, o.backend);
  add_spec_overrides(*cmd, o.overrides);
  add_data_option(*cmd, o.data);
  add_output_options(*cmd, args.files);
  add_keeping_flags(cmd, args);
  cmd->add_flag(
      "--quiet", o.quiet,
      "No per-epoch progress lines, and no notes between them (the packs, serial's releases, auto's calibrations); the tables and errors stay");
  cmd->add_flag(
         "--verbose", o.verbose,
         "Every model's epoch lines, however many models (without it, a run of more models than the terminal has rows, or than 8 on a file or pipe, shows one status line: models ended, time left, the best so far)")
      ->excludes("--quiet");
  return cmd;
}

void read_given_flags(const CLI::App& run, RunArgs& args) {
  args.calibration_steps_given = run.get_option("--calibration-steps")->count() > 0;
  args.pack_size_given = run.get_option("--pack-size")->count() > 0;
  args.save_best_given = run.get_option("--save-best")->count() > 0;
  args.threads_given = run.get_option("--threads")->count() > 0;
}

}  // namespace mf
