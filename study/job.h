#pragma once
// What a run trains: one job per model of the sweep, the run's overrides applied, and the options
// every mode shares. `multifit train` is a run of one job.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/factory.h"
#include "nn/spec.h"
#include "nn/sweep.h"
#include "runtime/names.h"
#include "study/progress.h"
#include "study/report/ranking.h"

namespace mf {

struct ModelReport;  // study/report/report.h
class RungJudge;     // nn/fit.h

// --mps: whether processes mode's workers run under CUDA's Multi-Process Service (runtime/mps.h).
enum class MpsUse {
  as_found,  // auto: a control daemon already running is used, none is started
  on,        // the running daemon, or one the run starts in a private folder and stops at its end
  off,       // the workers are kept from any daemon: the GPU time-slices them
};
inline constexpr Named<MpsUse> kMpsUseNames[] = {
    {"auto", MpsUse::as_found}, {"on", MpsUse::on}, {"off", MpsUse::off}};
inline const char* to_string(MpsUse m) { return name_of(kMpsUseNames, m); }

// Command-line values that replace a spec's, for every model of the run.
struct SpecOverrides {
  std::optional<int> epochs, batch_size;
  std::optional<float> learning_rate;
  std::optional<uint64_t> seed;
  std::optional<size_t> memory_limit;   // --memory-limit
  std::optional<PoolMode> memory_mode;  // --memory grow|reserve
};

struct RunOptions {
  std::string models_path;  // the file of the models to train: a sweep, or one model's spec (a
                            // sweep of one)
  std::string data;         // --data: every model's data source when set
  BackendOptions backend;
  SpecOverrides overrides;
  // --devices: the GPUs models are spread over, round robin; empty: device 0
  std::vector<int> devices;
  // --concurrency: at most this many models train at once; 0: all of them; absent: as many as the
  // machine holds (study/concurrency.h)
  std::optional<int> concurrency;
  int pack_size = 0;   // packed mode: at most this many models in a pack; 0: no bound of ours
  bool quiet = false;  // no per-epoch lines
  // Every model's epoch lines, however many models (study/progress.h: a run of many shows one
  // status line instead)
  bool verbose = false;
  // --rank-by, for the status line's best so far; absent: the run's default
  std::optional<RankBy> rank_by;
  bool timeline = false;  // time every step (for the overlap and the trace)
  // --mode auto's calibration: each model trains this many steps; 0: all
  int64_t calibration_steps = 0;
  // --stall-timeout: processes mode ends a worker that takes no step for this many seconds (or uses
  // no CPU while it builds); 0: never; absent: from the worker's own pace, never under a minute
  // (study/modes/processes/parent.cpp)
  std::optional<double> stall_timeout_s;
  // --keep-pools: serial mode keeps every model's pool until the last has trained, as a Keras loop
  // without clear_session() between its models keeps their memory, so that what that costs is
  // measured
  bool keep_pools = false;
  // --inject-fault: the model of this name makes a real fault after its first epoch
  // (Backend::inject_fault), so that what a crash takes down with it is measured; "" for none
  std::string inject_fault;
  // --save-best, in the process of its keeper: a model that ended ok hands it `save` (which writes
  // its weights to its Job::keep), and the keeper runs it only when the model may be among the best
  // (BestKeeper::stage), so that a pack of thousands does not write thousands of files to drop
  // them. Not sent to a processes-mode child (a function): there it is unset, every model that ends
  // ok is saved, and the parent's keeper drops what it need not keep.
  std::function<void(const ModelReport& report, const std::function<void()>& save)> stage_best;
  // The sweep's scheduler (nn/scheduler_spec.h), its max_epochs the largest of the jobs' epochs
  // once the overrides are applied (scheduler_for); none: every model trains its epochs.
  std::optional<SchedulerSpec> scheduler;
  // An in-process caller's judge of its trials, in place of a scheduler (the Python package's
  // Optuna pruner): it rules on each trial after every epoch but its last; null for none. Only
  // the modes that train in this process take it (serial, streams, packed; apps/multifit's checks).
  RungJudge* judge = nullptr;
  // An in-process caller's view of the run's status (the Python package's progress bar), in place
  // of the status lines (study/progress.h); empty for none. Not sent to a child.
  StatusSink status;
  MpsUse mps = MpsUse::as_found;  // --mps, processes mode (and MPI ranks)
  // --sm-share: processes mode under MPS, each worker's CUDA_MPS_ACTIVE_THREAD_PERCENTAGE (1 to
  // 100) unless its spec's "device" gives its own; absent: every worker may use all the SMs
  std::optional<int> sm_share;
  // --sm-partitions: streams and packed modes on the cuda backend split the GPU's SMs into this
  // many disjoint green contexts, model (or pack) i on partition i % N; 0: none, every model on
  // the whole GPU (a model whose spec's "device" gives "sms" has its own all the same)
  int sm_partitions = 0;
};

struct Job {
  size_t index = 0;  // the model's place in the sweep
  std::string name;
  std::optional<ModelSpec> spec;  // overrides applied, once; absent when the sweep's entry is bad
  std::string error;              // why the entry is bad
  std::string data;               // the data source it trains on
  int device = 0;                 // the GPU it is given (--devices)
  std::string load, save;         // train's --load and --save
  // run's --save-best: where its weights are saved when it ends ok, for the keeper to keep or drop
  // (study/best/staging.h); empty: not kept
  std::string keep;
  // a grid's or a search's axis values (SweepEntry::values)
  nlohmann::json values = nlohmann::json::object();
};

ModelSpec with_overrides(ModelSpec spec, const SpecOverrides& overrides);
// The sweep's scheduler for these jobs: its max_epochs the largest of their epochs (--epochs
// applied). A UserError when that leaves it no rung.
SchedulerSpec scheduler_for(SchedulerSpec spec, const std::vector<Job>& jobs);
std::vector<Job> make_jobs(const Sweep& sweep, const RunOptions& options);
// Gives `jobs` the GPUs of `devices` round robin, in their order (none: leaves them as they are).
// make_jobs does it over the sweep; a run of part of it does it again over its own jobs, or a shard
// of every second model would put all of them on one of two GPUs.
void spread_over_devices(std::vector<Job>& jobs, const std::vector<int>& devices);

// A good job as JSON and back, with its spec as the parent read it, overrides applied: what a child
// process is sent, so that it trains exactly that (study/modes/processes/protocol.h).
nlohmann::json to_json(const Job& job);
Job job_from_json(const nlohmann::json& json);

// The options as JSON and back, every field: sent to a child process with its job.
nlohmann::json to_json(const RunOptions& options);
RunOptions run_options_from_json(const nlohmann::json& json);

}  // namespace mf
