#pragma once
// The reports of a run and their forms. Each struct has one JSON form (json.cpp), which the result
// document uses (written to a temporary file, then renamed, so a reader never sees half of it; the
// step timeline left out: it goes to --trace) and in which a child process returns its model's
// report, timeline included (study/modes/processes/protocol.h). The CSV rows for tables and plots
// are made from the structs (csv.cpp). A field added here is added to its struct's form both ways
// (json.cpp, or run_json.cpp for a run's), csv.cpp if it is a column, its comment here, and
// tests/study's round trips.
//
// These comments are the reference for every field of the result document (--json; its top level:
// write_json, at the end). A field's JSON key is its name here unless its comment gives the key.
// In JSON an absent std::optional is null, and so is a text that is "" here, but for the names (a
// model's, a sweep's, a part's host), a run's mode, settings' layers and schedule, and
// machine.multifit, which are written as they are. Times are in seconds (_s), sizes in bytes.
#include <optional>
#include <string>
#include <vector>

#include "nn/fit.h"
#include "nn/scheduler_spec.h"
#include "nn/spec.h"
#include "runtime/json_forms.h"
#include "runtime/names.h"
#include "runtime/timeline.h"

namespace mf {

struct GpuSummary;  // runtime/nvml_monitor.h

// stopped: the sweep's scheduler stopped it at a rung (nn/scheduler_spec.h), a trial that lost, not
// a failure.
enum class ModelStatus { ok, diverged, oom, failed, stopped };
inline constexpr Named<ModelStatus> kModelStatusNames[] = {{"ok", ModelStatus::ok},
                                                           {"diverged", ModelStatus::diverged},
                                                           {"oom", ModelStatus::oom},
                                                           {"failed", ModelStatus::failed},
                                                           {"stopped", ModelStatus::stopped}};
inline const char* to_string(ModelStatus s) { return name_of(kModelStatusNames, s); }

// What a model trained with, its spec's settings with the command line's overrides applied (a
// model's "settings"; null when its spec was not read).
struct TrainingSettings {
  OptimizerKind optimizer = OptimizerKind::adam;
  // As written: the float's shortest decimal form (0.01, not 0.009999999776).
  double learning_rate = 0;
  int epochs = 0, batch_size = 0;
  double validation_split = 0;
  bool shuffle = true;
  uint64_t seed = 0;
  PoolMode memory_mode = PoolMode::grow;
  // Training steps recorded and replayed; unknown (null) until the model is built.
  std::optional<bool> graphs;
  // The cpu backend's threads for the model's operations (a pack member: its pack's): its share of
  // the run's, less its input pipeline's workers, at least 1; absent on a GPU, whose device runs
  // them, and until the model is built.
  std::optional<int> threads;
  // The Dense layers before the output layer, from the input on: their widths and activations (the
  // grid's hidden and activation axes); empty for none.
  std::vector<int> hidden;
  std::vector<Activation> activations;
  // With preprocessing, the model's input pipeline (nn/input_pipeline.h): its worker threads,
  // beside `threads`, and its ring slots; absent without, as the batches are then read from the
  // resident set.
  std::optional<int> pipeline_workers, prefetch;
  // Every layer, as Keras's summary names it: "Dense(64 relu) Dropout(0.2) Dense(1 sigmoid)".
  std::string layers;
  std::string schedule;  // the learning rate's schedule ("CosineDecay"), "" for a constant rate
};

// A model's report: one entry of a run's "models", in sweep order.
struct ModelReport {
  // Its place in the sweep (what merge and --resume match models by, with the name).
  size_t index = 0;
  std::string name;
  // A grid's or a search's axis values it was made with ({} for none).
  nlohmann::json values = nlohmann::json::object();
  ModelStatus status = ModelStatus::ok;
  // Why it did not end ok, in one line (what failed, and where); null when none (ok, and stopped:
  // fit.stop_reason says why).
  std::string error;
  // With the step timeline when the run asked for it. In JSON apart: "fit" {status (ok, diverged,
  // stopped), why, stopped_epoch, stop_reason, restored_epoch, rungs: [{epochs, value, kept}]}
  // (nn/fit.h), null when fit did not run and reached no rung; "epochs", one EpochMetrics each
  // (nn/fit.h; metrics and val_metrics by name; learning_rate null without ReduceLROnPlateau);
  // "train_s", from its first epoch's launch to its end, null unless fitted (a pack member's is its
  // pack's, until the member ended); and "timeline" {steps, epochs, input}, each [[begin_s, end_s],
  // ...] on clock_seconds(), which the document leaves out (--trace has it).
  FitResult fit;
  // From its worker's start to its start barrier: data, plan and pool, weights, and its warm-up
  // (PackFit::warm_up); absent when it got no backend.
  std::optional<double> startup_s;
  std::optional<double> samples_per_s;  // samples / train_s; absent unless it trained for some time
  int64_t samples = 0;                  // rows trained on, over all its steps
  int64_t train_rows = 0;               // its training rows, an epoch's samples
  // Against the same model alone (study/runner.h's compare_with_serial; absent without a serial or
  // --solo run beside it, as in train): solo_s, the serial run's train_s of it, absent unless it
  // fitted there, for some time, and ended ok; slowdown, train_s / solo_s, absent unless it fitted
  // and ended ok here too (the serial run's own: 1). A pack member's slowdown is its pack's: the
  // pack's longest train_s over the sum of its members' solo_s, absent unless each has a solo_s.
  std::optional<double> solo_s, slowdown;
  // In JSON "test_loss", "test_accuracy" and "test_metrics" (by name): null ({} for test_metrics)
  // without a test set, and test_accuracy without an accuracy.
  Evaluation test;
  // Which metrics exist, in JSON "metrics" {accuracy, validation, test, list}: a metric that exists
  // and is NaN was computed as NaN, not left out.
  bool has_accuracy = false;  // "accuracy": an accuracy among its metrics (a classification loss's)
  bool validated = false;     // "validation": fit.validation_split took rows
  bool tested = false;        // "test": a test set was evaluated
  bool fitted = false;        // fit ran (train_s is measured; not written: train_s is null without)
  std::optional<TrainingSettings> settings;  // absent when the spec was not read
  // In JSON "memory"."plan": the model's memory plan, part by part, [{name, bytes}] (empty when the
  // spec was not read).
  std::vector<PlanPart> plan;
  // Trainable parameters (nn/model.h's param_count); 0 when the spec was not read.
  int64_t params = 0;
  // In JSON "memory" {cap_bytes, reserved_bytes, in_use_bytes, peak_bytes} (its pool's,
  // runtime/memory_pool.h), with the four below and "plan".
  PoolStats memory;
  // NVML, the cuda backend: the device memory of the process that ran it (its CUDA context
  // included, as nvidia-smi shows it): its peak on each GPU the run sampled, summed over them
  // (report_gpus); absent where NVML saw no such process id (the cpu; another PID namespace).
  std::optional<size_t> process_device_bytes;
  // Processes mode: its worker's peak resident host memory (VmHWM).
  std::optional<size_t> process_peak_rss_bytes;
  // Serial mode: what the backend held (pools and data sets) just before and after the model and
  // its pool were released, as a Keras user checks around clear_session(); with --keep-pools, what
  // it held when the model ended (its pool and every earlier one's), and no after.
  std::optional<size_t> in_use_before_release_bytes, in_use_after_release_bytes;
  // Where it ran: "cpu", "cuda" or "host-exec"; the processor or GPU in words; and its data set
  // in words ("fashion-mnist (60000 train, 10000 test)"), in JSON "data"."source".
  std::string backend, device_name, data;
  // Backend::device_schedule, how its thread waited for the GPU: "blocking_sync" on the cuda
  // backend, which sets it (else as CUDA reads it back: "spin", "yield", "auto"); null on the cpu
  // backend, whose calls return finished.
  std::string device_schedule;
  // "data"."bytes": its data set (train and test rows), resident apart from the pool.
  size_t data_bytes = 0;
  std::string host;             // the machine's host name
  int pid = 0;                  // the process
  std::optional<int> mpi_rank;  // the MPI rank that trained it; absent outside mpirun
  int device = 0;               // the GPU it was given (--devices)
  // "cuda_visible_devices": CUDA_VISIBLE_DEVICES as the process saw it (null when unset).
  std::string visible_devices;
  // Packed mode: the pack it trained in (its number in the phase) and how many models that pack
  // held; "pack_boundary": why that pack is not part of an earlier one, as the plan said it
  // (modes/mode.h's plan_packs: "fit.batch_size 77, not 64 (pack 3)"), null for the first pack and
  // outside packed mode.
  std::optional<int> pack, pack_members;
  std::string pack_boundary;
  // "sms": the SMs of the green context it trained on (--sm-partitions, or its spec's "device"
  // "sms"); null on the whole GPU. "sm_share": its worker's CUDA_MPS_ACTIVE_THREAD_PERCENTAGE under
  // MPS (--sm-share, or its spec's); null when its kernels may use every SM.
  std::optional<int> sms, sm_share;
  // In JSON "metrics"."list", each {name, kind}: its metrics (the spec's metric_list, in order),
  // what each epoch's metrics and the test's are of.
  std::vector<MetricSpec> metrics;
};

// One process's part of a run that several made: an MPI rank (mpirun), or a shard (--shard I/N)
// merged into one document (multifit merge). A run's "ranks" or "shards" holds one each.
struct RunPart {
  // The rank, or the shard's I (a merged part that was no shard: its place among the parts).
  int index = 0;
  std::string host;  // the machine it ran on (its models' hosts, when they ran on several)
  // Its own run, start-up and training; absent for a journal merged as a part (a journal keeps its
  // models' reports, not its run's wall)
  std::optional<double> wall_s;
  std::optional<double> startup_s, samples_per_s;  // as a run's: absent when nothing reached them
  int models = 0;                                  // the models it trained
};

// What a run's models are of, so that `multifit merge` can tell the parts of one sweep from a
// foreign one: the sweep's name, its whole model count (a shard trains only some), and a
// fingerprint of every model as the run trains it and of the sweep's scheduler (each spec with the
// overrides applied, or its entry's error; study/sweep/shard.h), so that parts run with other
// overrides or another sweep file of the same name and size differ too. --data is left out of the
// fingerprint (each spec's own data key is in it): a shard may read its data where its machine
// keeps it. A run's "sweep"; null for train and for a sweep file that could not be read.
struct SweepIdentity {
  std::string name;
  size_t models = 0;
  // 16 hex digits (FNV-1a, 64 bits): the same sweep and overrides, the same text.
  std::string fingerprint;
};

// --shard I/N: the models at places I, I + N, I + 2N, ... of the sweep (0 <= I < N). In JSON
// {"index": I, "count": N}.
struct Shard {
  size_t index = 0, count = 1;
};
inline std::string to_string(const Shard& s) {
  return std::to_string(s.index) + "/" + std::to_string(s.count);
}
// "shard 1/3", or "the whole sweep" for none.
inline std::string shard_words(const std::optional<Shard>& shard) {
  return shard ? "shard " + to_string(*shard) : "the whole sweep";
}

// The machine a run was measured on, and how busy other work kept it (runtime/machine_load.h).
struct MachineRecord {
  // The version and commit that ran: "multifit 0.16.0 (commit 9f02506a1b2c)".
  std::string multifit;
  int cores = 0;                  // the CPUs this process may use (its affinity mask)
  int hardware_threads = 0;       // the machine's
  size_t memory_total_bytes = 0;  // MemTotal; 0 when unknown
  // One minute's, which lags: a record, not a verdict.
  double load_average_before = 0, load_average_after = 0;
  // Between the run's start and end: the cores other processes kept busy on average (absent for a
  // run under a second), and the share of the time some task waited for a CPU (ours too; absent
  // without PSI).
  std::optional<double> others_busy_cores, cpu_pressure;
  // Why the run's timings are not comparable with a quiet machine's (runtime/machine_load.h's
  // busy_machine), "" when nothing says so.
  std::string busy;
  // What a busy machine cost the run (study/report/busy_cost.h): the samples/s while training that
  // its mode reached on a quiet machine in the same invocation, and where ("run 2", the median of
  // "runs 2 and 4", or "the calibration": --mode auto's). Absent, "" for a quiet run, or for a busy
  // one that nothing quiet measured.
  std::optional<double> quiet_samples_per_s;
  std::string quiet_from;
};

// How a mode on the cpu backend used the run's one budget of cores (--threads, by default the cores
// this process may use), which every mode of the run shares: `at_once` models, packs or worker
// processes trained at the same time on `threads_each` threads each. Serial gives its one model
// every core (each step spreads over them only where that is measured to pay,
// backends/cpu/spread_choice.h); streams and packed share the cores among their host threads,
// processes among the workers that run at once. In JSON {"cores", "at_once", "threads_each"}.
struct Arrangement {
  int cores = 1, at_once = 1, threads_each = 1;
};

// What a sweep's scheduler did (nn/scheduler_spec.h), drawn from its models' rungs
// (FitResult::rungs): each rung's trials and survivors, and the compute it spent.
struct RungSummary {
  // The rung: its bracket (hyperband's; else 0), after this many epochs.
  int bracket = 0, epochs = 0;
  int trials = 0, kept = 0;  // the trials judged there, and those that went on
  // The metric there over its trials (none: NaN); with the worst first, as the ranking reads it.
  double best = NAN, median = NAN, worst = NAN;
};
// A run's "scheduler" {spec, rungs, samples, full_samples, compute_fraction}: compute_fraction is
// samples / full_samples (null when full_samples is 0), written, not read.
struct SchedulerReport {
  SchedulerSpec spec;
  std::vector<RungSummary> rungs;  // by bracket, then epochs
  // Rows trained on, every model's (its samples), and what training every model for its epochs
  // would have taken (its train_rows times its epochs): the compute the scheduler spent of the full
  // sweep's.
  int64_t samples = 0, full_samples = 0;
};
// The summary of `run`'s models under `spec`.
SchedulerReport summarize_scheduler(const SchedulerSpec& spec,
                                    const std::vector<ModelReport>& models);

// A run's report: one mode's run of the sweep (or of its part). In JSON it has, besides its fields,
// "unjudged": why its timings cannot be judged (study/report/answer.h's why_unjudged), its wall
// under 0.1 s ("wall 7ms, under 0.1 s": start-up and noise decide it) or "a busy machine: " and
// machine.busy, "; "-joined; null when they can be. A run made in parts (mpirun's ranks, merge's
// parts) adds its parts' figures up by combine_parts.cpp's rules, each said there.
struct RunReport {
  // backend: "cpu", "cuda" or "host-exec", its first model's that reached one; device_name: the
  // processor or GPU in words; mode: "serial", "streams", "processes" or "packed" (--mode auto: the
  // one it chose); data: its models' data sets in words, in JSON "data"."source". device_name,
  // device_schedule and data are its models' distinct ones, "; "-joined (describe_models).
  std::string backend, device_name, mode = "serial", data;
  // The models' (Backend::device_schedule): "blocking_sync" on the cuda backend; null on the cpu
  // backend.
  std::string device_schedule;
  // "data"."bytes": the processes' resident data sets, apart from the pools (one copy per process
  // and data set).
  size_t data_bytes = 0;
  // Peak resident host memory (VmHWM) of this process: pools, data, libraries. It never goes
  // down, so in --mode all a later mode shows an earlier one's peak if that was higher.
  size_t host_peak_rss_bytes = 0;
  std::optional<size_t> workers_peak_rss_bytes;  // processes mode: the sum of its workers' peaks
  double wall_s = 0;                             // the whole run: start-up and training
  std::optional<SchedulerReport> scheduler;      // a sweep with a scheduler: what it did
  // Absent when a failure came before they were measured (start-up: no model started; training:
  // none trained a row). Start-up: per phase, from its start to the start barrier, summed over the
  // phases; each model's warm-up is inside it, and in processes mode the workers' spawning and
  // loading. Training: from the barrier to the phase's end, summed. samples_per_s: every model's
  // samples over train_s.
  std::optional<double> startup_s, train_s, samples_per_s;
  // In-process modes of `run`: the process's one-time start-up (libraries, the CUDA context), made
  // once before the first mode and apart from every mode's figures.
  std::optional<double> process_startup_s;
  // speedup_vs_serial: the serial (or --solo) run's wall_s over this one's, and serial_wall_s that
  // wall (the serial run's own: 1); only when every model's fit ran (ok or not) in both runs,
  // neither took models from a journal (--resume), and this wall is over 0.
  std::optional<double> speedup_vs_serial, serial_wall_s;
  int repeat = 1;  // --repeat: which of the runs of its mode this is, from 1
  // At most this many models trained at once; 0 when none was to train.
  int concurrency = 1;
  // Why that many, in one line: --concurrency as asked, or the machine's bound that chose it and
  // the others (study/concurrency.h)
  std::string concurrency_reason;
  // In-process modes: the most host threads that trained models at once (absent in processes mode).
  std::optional<int> training_threads;
  // The cpu backend: how the mode used the run's cores; null on a GPU and for a run in parts.
  std::optional<Arrangement> arrangement;
  // --keep-pools in serial mode: each model's pool was kept until the last had trained, so its
  // in_use_before_release_bytes is what the run held then, every earlier pool with its own
  bool pools_kept = false;
  // --inject-fault: the model made to fault after its first epoch; "" for none.
  std::string injected_fault;
  // --resume: models taken as they ended in the journal's run, not trained again.
  int resumed_models = 0;
  // With overlap_kind, the run's "overlap" {fraction, busy_s, concurrent_s, kind}
  // (runtime/timeline.h): busy_s, the time some model had a training step in flight; concurrent_s,
  // the time two or more had; fraction, concurrent_s / busy_s (0 for no busy time; written, not
  // read). From each step's start and end marks (CUDA events on the model's stream on a GPU, where
  // a step is in flight from when its stream reaches it, so one queued behind another model's
  // kernels counts; the clock on the cpu). A pack's members share their steps, so a pack of two or
  // more overlaps all along. Null when no steps were timed (train without --trace; nothing
  // trained) and for a run in parts (mpirun, merge), whose machines' clocks differ.
  std::optional<Overlap> overlap;
  // "kind": what the overlap measures: "concurrent", kernels (or the cpu's threads) that may run at
  // the same time; or "interleaved", GPU processes without MPS, whose kernels the GPU time-slices:
  // their steps' spans interleave, their kernels never run at once.
  std::string overlap_kind;
  // The cuda backend: whether an MPS control daemon answered at its pipe directory's control socket
  // when the run began (runtime/mps.h); null on the cpu (and host-exec), and for a run in parts.
  std::optional<bool> mps;
  // "mps_daemon": who ran that daemon (--mps): "found", one already running; "started", one the
  // run started in a private folder and stopped at its end; "kept_out", --mps off, the workers kept
  // from any daemon; null outside processes mode on the cuda backend.
  std::optional<std::string> mps_daemon;
  // "sm_partitions": --sm-partitions, the green contexts the GPU's SMs were split into for the
  // models of streams or packed mode; null without it (and in the modes it has no effect on).
  std::optional<int> sm_partitions;
  // NVML's samples summarised (report_gpus), taken every 50 ms on every GPU of --devices, each
  // found by its PCI bus id (so CUDA_VISIBLE_DEVICES holds; in processes mode the parent samples
  // them all): for one GPU an object {device, samples, mean_utilization_percent,
  // max_utilization_percent, peak_used_bytes, total_bytes}; for several an array in --devices
  // order, each entry that object with cuda_device, pci_bus_id and note (why it was not sampled,
  // its figures then null and samples 0, or why its sampling stopped early). Each figure is
  // runtime/nvml_monitor.h's GpuSummary's. Null when no GPU was sampled, gpu_note saying why.
  nlohmann::json gpu;
  // Why gpu is null (the cpu backend; no NVML; a run in parts), or why some GPU's sampling stopped
  // early or never began ("cuda device N: ..." for each, when the GPUs' differ).
  std::string gpu_note;
  std::string error;  // a failure of the run as a whole (its sweep file could not be read)
  // "auto": --mode auto's choice {mode, calibration_steps (the most steps per model),
  // calibration_s (the calibration's time, apart from wall_s), calibration: per mode, fastest
  // predicted first, {mode, startup_s, samples_per_s, predicted_wall_s, unjudged}, the figures
  // null when nothing trained, unjudged as a run's (null when its timings can be judged)}; on
  // --resume the journal's; null otherwise.
  nlohmann::json auto_choice;
  // The ranking (study/report/ranking.h): its metric ("" before ranking), and the names of the
  // models that have a value of it, best first.
  std::string rank_by;
  std::vector<std::string> ranking;
  std::vector<RunPart> ranks;  // mpirun: every rank's figures, by rank; empty in one process
  // Absent when no sweep was read (train; a sweep file that could not be).
  std::optional<SweepIdentity> sweep;
  std::optional<Shard> shard;  // --shard; absent when the run had the whole sweep
  // multifit merge: every part's figures, in the order given; empty otherwise.
  std::vector<RunPart> shards;
  // Absent for a merged document and under mpirun, whose parts ran apart.
  std::optional<MachineRecord> machine;
  std::vector<ModelReport> models;  // in sweep order, each without its timeline in the document
};

// A metric as the forms write it: a number; "nan", "inf" or "-inf" when it was computed and is not
// finite (JSON has no such numbers); null when there is none (no test set, no validation rows, no
// accuracy for mse).
nlohmann::json metric_json(double value, bool present = true);
nlohmann::json metric_json(const std::optional<double>& value);

// A per-epoch time summed over the model's completed epochs (the input pipeline's wait and work).
double epochs_sum(const ModelReport& m, double EpochMetrics::*seconds);
// The share of its epochs' time the model waited for its input pipeline's batches (the epochs'
// input_wait_s over their seconds, as the epoch line's "input wait"); absent without a pipeline or
// an epoch.
std::optional<double> input_wait_fraction(const ModelReport& m);

// The one JSON form of each, both ways: every field (a model's step timeline under "timeline"); a
// metric that is not finite is "nan", "inf" or "-inf", a metric that does not exist null. A form
// read back and written again is the same JSON; what is derived from other fields (a run's
// `unjudged`, its overlap's fraction, its scheduler's compute_fraction) is written, not read. A
// model read without "timeline" (the document's form, a journal's) has none. Reading throws
// nlohmann::json's exceptions for a field missing or of another type, UserError for a name that no
// enum value has, and std::invalid_argument for a shard that is none (unless 0 <= index < count).
void to_json(nlohmann::json& j, const ModelReport& model);  // json.cpp
void from_json(const nlohmann::json& j, ModelReport& model);
// run_json.cpp: each model without its timeline.
void to_json(nlohmann::json& j, const RunReport& run);
void from_json(const nlohmann::json& j, RunReport& run);
void to_json(nlohmann::json& j, const RunPart& part);
void from_json(const nlohmann::json& j, RunPart& part);
void to_json(nlohmann::json& j, const SweepIdentity& sweep);
void from_json(const nlohmann::json& j, SweepIdentity& sweep);
void to_json(nlohmann::json& j, const Shard& shard);
void from_json(const nlohmann::json& j, Shard& shard);
void to_json(nlohmann::json& j, const MachineRecord& machine);
void from_json(const nlohmann::json& j, MachineRecord& machine);
void to_json(nlohmann::json& j, const Arrangement& arrangement);
void from_json(const nlohmann::json& j, Arrangement& arrangement);
void to_json(nlohmann::json& j, const RungSummary& rung);
void from_json(const nlohmann::json& j, RungSummary& rung);
void to_json(nlohmann::json& j, const SchedulerReport& scheduler);
void from_json(const nlohmann::json& j, SchedulerReport& scheduler);

// The run's `gpu` and `gpu_note` from NVML's summaries, one per GPU sampled: for one GPU, its
// summary or null; for several, an array of them, null when none was sampled. Each model's
// process_device_bytes is the sum, over the GPUs, of its process's peak on each.
void report_gpus(RunReport& run, const std::vector<GpuSummary>& gpus);
// write_json and write_csv write `path` as runtime/output_file.h does (`-`: standard output), and
// throw SystemError naming it and the OS's reason when it cannot be written.
// The document: one run's form alone; for several runs (--mode all, --repeat; --solo's serial
// runs are not among them), {"mode": the runs' one mode or "all", "runs": [each run's form, in the
// order they ran]}, with, under --repeat N > 1, "repeat": N and "repeats": per mode, in the order
// of its first run, {mode, runs (how many), then wall_s, startup_s, train_s, samples_per_s,
// speedup_vs_serial and mean_slowdown (the mean of its models' slowdowns), each {median, min, max}
// over its runs, null where no run has it} (study/report/repeats.h); and "answer", one sentence
// (modes_answer, study/report/answer.h), where a mode other than serial has a speedup_vs_serial.
void write_json(const std::vector<RunReport>& runs, const std::string& path);
// One row per model and mode, with its run's figures, under a header line.
void write_csv(const std::vector<RunReport>& runs, const std::string& path);

}  // namespace mf
