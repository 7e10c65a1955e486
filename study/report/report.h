#pragma once
// The reports of a run and their forms. Each struct has one JSON form (json.cpp), which the result
// document uses (written to a temporary file, then renamed, so a reader never sees half of it; the
// step timeline left out: it goes to --trace) and in which a child process returns its model's
// report, timeline included (study/modes/processes/protocol.h). The CSV rows for tables and plots
// are made from the structs (csv.cpp). A field added here is added to its struct's form both ways
// (json.cpp, or run_json.cpp for a run's), csv.cpp if it is a column, the README's table of fields,
// and tests/study's round trips.
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

// stopped: the sweep's scheduler stopped it at a rung (nn/scheduler_spec.h), a trial that lost, not a failure.
enum class ModelStatus { ok, diverged, oom, failed, stopped };
inline constexpr Named<ModelStatus> kModelStatusNames[] = {{"ok", ModelStatus::ok},
                                                           {"diverged", ModelStatus::diverged},
                                                           {"oom", ModelStatus::oom},
                                                           {"failed", ModelStatus::failed},
                                                           {"stopped", ModelStatus::stopped}};
inline const char* to_string(ModelStatus s) { return name_of(kModelStatusNames, s); }

// What a model trained with, its spec's settings with the command line's overrides applied.
struct TrainingSettings {
  OptimizerKind optimizer = OptimizerKind::adam;
  double learning_rate = 0;  // as written: the float's shortest decimal form (0.01, not 0.009999999776)
  int epochs = 0, batch_size = 0;
  double validation_split = 0;
  bool shuffle = true;
  uint64_t seed = 0;
  PoolMode memory_mode = PoolMode::grow;
  std::optional<bool> graphs;  // training steps recorded and replayed; unknown until the model is built
  // The cpu backend's threads for the model's operations (a pack member: its pack's): its share of
  // the run's, less its input pipeline's workers, at least 1; absent on a GPU, whose device runs
  // them, and until the model is built.
  std::optional<int> threads;
  // The Dense layers before the output layer, from the input on: their widths and activations (the
  // grid's hidden and activation axes); empty for none.
  std::vector<int> hidden;
  std::vector<Activation> activations;
  // With preprocessing, the model's input pipeline (nn/input_pipeline.h): its worker threads, beside
  // `threads`, and its ring slots; absent without, as the batches are then read from the resident set.
  std::optional<int> pipeline_workers, prefetch;
  std::string layers;    // every layer, as Keras's summary names it: "Dense(64 relu) Dropout(0.2) Dense(1 sigmoid)"
  std::string schedule;  // the learning rate's schedule ("CosineDecay"), "" for a constant rate
};

struct ModelReport {
  size_t index = 0;  // its place in the sweep (what merge and --resume match models by, with the name)
  std::string name;
  nlohmann::json values = nlohmann::json::object();  // a grid's or a search's axis values it was made with
  ModelStatus status = ModelStatus::ok;
  std::string error;
  FitResult fit;  // with the step timeline when the run asked for it
  std::optional<double> startup_s;  // data, plan and pool, weights: before the start barrier
  std::optional<double> samples_per_s;
  int64_t samples = 0;     // rows trained on, over all its steps
  int64_t train_rows = 0;  // its training rows, an epoch's samples
  std::optional<double> solo_s, slowdown;
  Evaluation test;
  // Which metrics exist: a metric that exists and is NaN was computed as NaN, not left out.
  bool has_accuracy = false;  // an accuracy among its metrics (a classification loss's, by default)
  bool validated = false;     // fit.validation_split took rows
  bool tested = false;        // a test set was evaluated
  bool fitted = false;        // fit ran (train_s is measured)
  std::optional<TrainingSettings> settings;  // absent when the spec was not read
  std::vector<PlanPart> plan;  // the model's memory plan, part by part (empty when the spec was not read)
  int64_t params = 0;
  PoolStats memory;
  std::optional<size_t> process_device_bytes;  // NVML: the device memory of the process that ran it, context included
  std::optional<size_t> process_peak_rss_bytes;  // processes mode: its worker's peak resident host memory (VmHWM)
  // Serial mode: what the backend held (pools and data sets) just before and after the model and its
  // pool were released, as a Keras user checks around clear_session(); with --keep-pools, what it
  // held when the model ended (its pool and every earlier one's), and no after.
  std::optional<size_t> in_use_before_release_bytes, in_use_after_release_bytes;
  // Where it ran.
  std::string backend, device_name, data;  // "cpu", the processor in words, the data set in words
  std::string device_schedule;             // Backend::device_schedule: how its thread waited for the GPU
  size_t data_bytes = 0;                   // its data set, resident apart from the pool
  std::string host;                        // the machine's host name
  int pid = 0;                             // the process
  std::optional<int> mpi_rank;             // the MPI rank that trained it; absent outside mpirun
  int device = 0;                          // the GPU it was given (--devices)
  std::string visible_devices;             // CUDA_VISIBLE_DEVICES as the process saw it ("" when unset)
  // Packed mode: the pack it trained in (its number in the phase) and how many models that pack held.
  std::optional<int> pack, pack_members;
  // Its metrics (the spec's metric_list, in order): what each epoch's metrics and the test's are of.
  std::vector<MetricSpec> metrics;
};


// One process's part of a run that several made: an MPI rank (mpirun), or a shard (--shard I/N)
// merged into one document (multifit merge).
struct RunPart {
  int index = 0;     // the rank, or the shard's I (a merged part that was no shard: its place among the parts)
  std::string host;  // the machine it ran on (its models' hosts, when they ran on several)
  // Its own run, start-up and training; absent for a journal merged as a part (a journal keeps its
  // models' reports, not its run's wall)
  std::optional<double> wall_s;
  std::optional<double> startup_s, samples_per_s;  // as a run's: absent when nothing reached them
  int models = 0;  // the models it trained
};

// What a run's models are of, so that `multifit merge` can tell the parts of one sweep from a
// foreign one: the sweep's name, its whole model count (a shard trains only some), and a
// fingerprint of every model as the run trains it and of the sweep's scheduler (each spec with the overrides applied, or its
// entry's error; study/shard.h), so that parts run with other overrides or another sweep file of
// the same name and size differ too.
struct SweepIdentity {
  std::string name;
  size_t models = 0;
  std::string fingerprint;  // 16 hex digits (FNV-1a, 64 bits): the same sweep and overrides, the same text
};

// --shard I/N: the models at places I, I + N, I + 2N, ... of the sweep (0 <= I < N).
struct Shard {
  size_t index = 0, count = 1;
};
inline std::string to_string(const Shard& s) { return std::to_string(s.index) + "/" + std::to_string(s.count); }
// "shard 1/3", or "the whole sweep" for none.
inline std::string shard_words(const std::optional<Shard>& shard) {
  return shard ? "shard " + to_string(*shard) : "the whole sweep";
}

// The machine a run was measured on, and how busy other work kept it (runtime/machine_load.h).
struct MachineRecord {
  std::string multifit;            // the version and commit that ran: "multifit 0.16.0 (commit 9f02506a1b2c)"
  int cores = 0;                   // the CPUs this process may use (its affinity mask)
  int hardware_threads = 0;        // the machine's
  size_t memory_total_bytes = 0;   // MemTotal; 0 when unknown
  double load_average_before = 0, load_average_after = 0;  // one minute's, which lags: a record, not a verdict
  // Between the run's start and end: the cores other processes kept busy on average (absent for a run
  // under a second), and the share of the time some task waited for a CPU (ours too; absent without PSI).
  std::optional<double> others_busy_cores, cpu_pressure;
  // Why the run's timings are not comparable with a quiet machine's (runtime/machine_load.h's
  // busy_machine), "" when nothing says so.
  std::string busy;
};

// What a sweep's scheduler did (nn/scheduler_spec.h), drawn from its models' rungs
// (FitResult::rungs): each rung's trials and survivors, and the compute it spent.
struct RungSummary {
  int bracket = 0, epochs = 0;  // the rung: its bracket (hyperband's; else 0), after this many epochs
  int trials = 0, kept = 0;     // the trials judged there, and those that went on
  // The metric there over its trials (none: NaN); with the worst first, as the ranking reads it.
  double best = NAN, median = NAN, worst = NAN;
};
struct SchedulerReport {
  SchedulerSpec spec;
  std::vector<RungSummary> rungs;  // by bracket, then epochs
  // Rows trained on, every model's (its samples), and what training every model for its epochs
  // would have taken (its train_rows times its epochs): the compute the scheduler spent of the full sweep's.
  int64_t samples = 0, full_samples = 0;
};
// The summary of `run`'s models under `spec`.
SchedulerReport summarize_scheduler(const SchedulerSpec& spec, const std::vector<ModelReport>& models);

struct RunReport {
  std::string backend, device_name, mode = "serial", data;  // device_name: the processor or GPU in words
  std::string device_schedule;  // the models' (Backend::device_schedule); "" on the cpu
  size_t data_bytes = 0;  // the process's resident data sets, apart from the pools
  // Peak resident host memory (VmHWM) of this process: pools, data, libraries. It never goes
  // down, so in --mode all a later mode shows an earlier one's peak if that was higher.
  size_t host_peak_rss_bytes = 0;
  std::optional<size_t> workers_peak_rss_bytes;  // processes mode: the sum of its workers' peaks
  double wall_s = 0;  // the whole run: start-up and training
  std::optional<SchedulerReport> scheduler;  // a sweep with a scheduler: what it did
  // Absent when a failure came before they were measured. Start-up: per phase, from its start to the
  // start barrier; training: from the barrier to the phase's end. samples_per_s counts training time.
  std::optional<double> startup_s, train_s, samples_per_s;
  // In-process modes of `run`: the process's one-time start-up (libraries, the CUDA context), made once
  // before the first mode and apart from every mode's figures.
  std::optional<double> process_startup_s;
  std::optional<double> speedup_vs_serial, serial_wall_s;  // and the serial (or --solo) run's wall it is against
  int repeat = 1;       // --repeat: which of the runs of its mode this is, from 1
  int concurrency = 1;  // at most this many models trained at once
  // Why that many, in one line: --concurrency as asked, or the machine's bound that chose it and the
  // others (study/concurrency.h)
  std::string concurrency_reason;
  std::optional<int> training_threads;  // in-process modes: the most host threads that trained models at once
  // --keep-pools in serial mode: each model's pool was kept until the last had trained, so its
  // in_use_before_release_bytes is what the run held then, every earlier pool with its own
  bool pools_kept = false;
  std::string injected_fault;  // --inject-fault: the model made to fault after its first epoch; "" for none
  int resumed_models = 0;  // --resume: models taken as they ended in the journal's run, not trained again
  std::optional<Overlap> overlap;  // from the step timeline, when it was recorded
  // What the overlap measures: "concurrent", kernels (or the cpu's threads) that may run at the same
  // time; or "interleaved", GPU processes without MPS, whose kernels the GPU time-slices: their steps'
  // spans interleave, their kernels never run at once.
  std::string overlap_kind;
  std::optional<bool> mps;  // the cuda backend: whether an MPS control daemon was running (runtime/mps.h)
  nlohmann::json gpu;              // NVML's samples summarised (report_gpus); null when there are none
  std::string gpu_note;            // why gpu is null, or why some GPU's sampling stopped early or never began
  std::string error;  // a failure of the run as a whole (its sweep file could not be read)
  nlohmann::json auto_choice;  // --mode auto: each mode's calibration and the mode chosen; null otherwise
  // The ranking (study/report/ranking.h): its metric ("" before ranking), and the names of the models
  // that have a value of it, best first.
  std::string rank_by;
  std::vector<std::string> ranking;
  std::vector<RunPart> ranks;   // mpirun: every rank's figures, by rank; empty in one process
  std::optional<SweepIdentity> sweep;  // absent when no sweep was read (train; a sweep file that could not be)
  std::optional<Shard> shard;          // --shard; absent when the run had the whole sweep
  std::vector<RunPart> shards;         // multifit merge: every part's figures, in the order given; empty otherwise
  std::optional<MachineRecord> machine;  // absent for a merged document and under mpirun, whose parts ran apart
  std::vector<ModelReport> models;
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
void to_json(nlohmann::json& j, const RunReport& run);  // run_json.cpp: each model without its timeline
void from_json(const nlohmann::json& j, RunReport& run);
void to_json(nlohmann::json& j, const RunPart& part);
void from_json(const nlohmann::json& j, RunPart& part);
void to_json(nlohmann::json& j, const SweepIdentity& sweep);
void from_json(const nlohmann::json& j, SweepIdentity& sweep);
void to_json(nlohmann::json& j, const Shard& shard);
void from_json(const nlohmann::json& j, Shard& shard);
void to_json(nlohmann::json& j, const MachineRecord& machine);
void from_json(const nlohmann::json& j, MachineRecord& machine);
void to_json(nlohmann::json& j, const RungSummary& rung);
void from_json(const nlohmann::json& j, RungSummary& rung);
void to_json(nlohmann::json& j, const SchedulerReport& scheduler);
void from_json(const nlohmann::json& j, SchedulerReport& scheduler);

// The run's `gpu` and `gpu_note` from NVML's summaries, one per GPU sampled (the README's table of
// fields): for one GPU, its summary or null; for several, an array of them, null when none was sampled.
// Each model's process_device_bytes is its process's peak over the GPUs it was seen on.
void report_gpus(RunReport& run, const std::vector<GpuSummary>& gpus);
// write_json and write_csv write `path` as runtime/output_file.h does (`-`: standard output), and
// throw SystemError naming it and the OS's reason when it cannot be written.
// One run's document, or {"mode": "all", "runs": [...]} for several modes of one sweep, with "answer"
// (modes_answer, study/report/answer.h) where serial ran beside others.
void write_json(const std::vector<RunReport>& runs, const std::string& path);
// One row per model and mode, with its run's figures, under a header line.
void write_csv(const std::vector<RunReport>& runs, const std::string& path);

}  // namespace mf
