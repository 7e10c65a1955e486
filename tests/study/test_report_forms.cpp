// Every field of a model's and a run's report through each of its forms, against values written
// here, never against the form itself:
//  * a model's one JSON form (nlohmann::json(report), study/report/json.cpp) against literal JSON
//    text, step timeline included;
//  * the document (to_json(RunReport), write_json): that form with each model's "timeline" left
//    out, against literal JSON text;
//  * the pipe a child process returns its report through (study/modes/processes/protocol.h):
//    json(report).dump() as one line, parsed, get<ModelReport>(); what comes back compared field by
//    field with what went;
//  * the CSV (write_csv) against a literal header and rows.
// And what a child is sent with its job, field by field: the options (to_json,
// run_options_from_json) and the job itself, its spec included (to_json(Job), job_from_json).
//
// A field added to a report, to the options or to a job must fail here too: see the field-count
// guards below.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "runtime/nvml_monitor.h"
#include "study/job.h"
#include "study/report/repeats.h"
#include "study/report/report.h"
#include "study/sweep/rungs.h"
#include "same_fields.h"

namespace mf {
namespace {

using nlohmann::json;

// ---- Field-count guards ------------------------------------------------------------------------
// A structured binding must name every field of the struct it takes apart, so each guard below
// stops compiling ("N names provided for structured binding ... decomposes into M elements") as
// soon as a field is added to or removed from one of these structs. That is on purpose. Whoever
// adds a field: give it a distinct, non-default value in full_model() / full_run() / full_options()
// / full_job(), add it to the literal JSON and CSV below if those forms carry it, and to the
// field-by-field comparisons of the pipe, of the options and of the job (or, if it does not cross,
// to a test that says so); then add its name here. A check on sizeof() would catch most additions
// too, but it moves with the standard library and with padding (a bool can hide in the padding
// after another), and it names nothing; the binding counts fields exactly, on every compiler.
[[maybe_unused]] void field_count_guards(ModelReport& m, RunReport& r, TrainingSettings& ts,
                                         FitResult& f, EpochMetrics& e, Evaluation& v, PoolStats& p,
                                         PlanPart& pp, Interval& i, Overlap& o, RunOptions& ro,
                                         SpecOverrides& so, BackendOptions& bo, Job& jb,
                                         ModelSpec& ms, LayerSpec& ls, OptimizerSpec& os,
                                         FitSpec& fs, MemorySpec& mm, PipelineSpec& pl, RunPart& rp,
                                         SweepIdentity& si, Shard& sh, MachineRecord& mr,
                                         Arrangement& ar, SchedulerReport& sr, RungSummary& rs) {
  [[maybe_unused]] auto& [m_index, m_name, m_values, m_status, m_error, m_fit, m_startup_s,
                          m_samples_per_s, m_samples, m_train_rows, m_solo_s, m_slowdown, m_test,
                          m_has_accuracy, m_validated, m_tested, m_fitted, m_settings, m_plan,
                          m_params, m_memory, m_process_device_bytes, m_process_peak_rss_bytes,
                          m_in_use_before_release_bytes, m_in_use_after_release_bytes, m_backend,
                          m_device_name, m_data, m_device_schedule, m_data_bytes, m_host, m_pid,
                          m_mpi_rank, m_device, m_visible_devices, m_pack, m_pack_members,
                          m_pack_boundary, m_sms, m_sm_share, m_metrics] = m;
  [[maybe_unused]] auto& [r_backend, r_device_name, r_mode, r_data, r_device_schedule, r_data_bytes,
                          r_host_peak_rss_bytes, r_workers_peak_rss_bytes, r_wall_s, r_scheduler,
                          r_startup_s, r_train_s, r_samples_per_s, r_process_startup_s,
                          r_speedup_vs_serial, r_serial_wall_s, r_repeat, r_concurrency,
                          r_concurrency_reason, r_training_threads, r_arrangement, r_pools_kept,
                          r_injected_fault, r_resumed_models, r_overlap, r_overlap_kind, r_mps,
                          r_mps_daemon, r_sm_partitions, r_gpu, r_gpu_note, r_error, r_auto_choice,
                          r_rank_by, r_ranking, r_ranks, r_sweep, r_shard, r_shards, r_machine,
                          r_models] = r;
  [[maybe_unused]] auto& [mr_multifit, mr_cores, mr_hardware_threads, mr_memory_total_bytes,
                          mr_load_average_before, mr_load_average_after, mr_others_busy_cores,
                          mr_cpu_pressure, mr_busy, mr_quiet_samples_per_s, mr_quiet_from] = mr;
  [[maybe_unused]] auto& [ar_cores, ar_at_once, ar_threads_each] = ar;
  [[maybe_unused]] auto& [rp_index, rp_host, rp_wall_s, rp_startup_s, rp_samples_per_s, rp_models] =
      rp;
  [[maybe_unused]] auto& [si_name, si_models, si_fingerprint] = si;
  [[maybe_unused]] auto& [sr_spec, sr_rungs, sr_samples, sr_full_samples] = sr;
  [[maybe_unused]] auto& [rs_bracket, rs_epochs, rs_trials, rs_kept, rs_best, rs_median, rs_worst] =
      rs;
  [[maybe_unused]] auto& [sh_index, sh_count] = sh;
  [[maybe_unused]] auto& [ts_optimizer, ts_learning_rate, ts_epochs, ts_batch_size,
                          ts_validation_split, ts_shuffle, ts_seed, ts_memory_mode, ts_graphs,
                          ts_threads, ts_hidden, ts_activations, ts_pipeline_workers, ts_prefetch,
                          ts_layers, ts_schedule] = ts;
  [[maybe_unused]] auto& [f_status, f_why, f_epochs, f_train_s, f_samples, f_steps, f_epoch_spans,
                          f_input_spans, f_stopped_epoch, f_stop_reason, f_restored_epoch,
                          f_rungs] = f;
  [[maybe_unused]] auto& [e_loss, e_accuracy, e_val_loss, e_val_accuracy, e_seconds,
                          e_samples_per_s, e_input_wait_s, e_input_busy_s, e_metrics, e_val_metrics,
                          e_learning_rate] = e;
  [[maybe_unused]] auto& [v_loss, v_accuracy, v_metrics] = v;
  [[maybe_unused]] auto& [p_cap_bytes, p_reserved_bytes, p_in_use_bytes, p_peak_bytes] = p;
  [[maybe_unused]] auto& [pp_name, pp_bytes] = pp;
  [[maybe_unused]] auto& [i_begin_s, i_end_s] = i;
  [[maybe_unused]] auto& [o_busy_s, o_concurrent_s] = o;
  [[maybe_unused]] auto& [ro_models_path, ro_data, ro_backend, ro_overrides, ro_devices,
                          ro_concurrency, ro_pack_size, ro_quiet, ro_verbose, ro_rank_by,
                          ro_timeline, ro_calibration_steps, ro_stall_timeout_s, ro_keep_pools,
                          ro_inject_fault, ro_stage_best, ro_scheduler, ro_judge, ro_status, ro_mps,
                          ro_sm_share, ro_sm_partitions] = ro;
  [[maybe_unused]] auto& [so_epochs, so_batch_size, so_learning_rate, so_seed, so_memory_limit,
                          so_memory_mode] = so;
  [[maybe_unused]] auto& [bo_kind, bo_gemm, bo_activations, bo_graphs, bo_device, bo_threads] = bo;
  [[maybe_unused]] auto& [jb_index, jb_name, jb_spec, jb_error, jb_data, jb_device, jb_load,
                          jb_save, jb_keep, jb_values] = jb;
  [[maybe_unused]] auto& [ms_name, ms_data, ms_input, ms_layers, ms_loss, ms_metrics, ms_optimizer,
                          ms_fit, ms_seed, ms_memory, ms_targets, ms_input_shape, ms_preprocessing,
                          ms_pipeline, ms_device_share] = ms;
  [[maybe_unused]] auto& [ls_units, ls_activation, ls_kind, ls_use_bias, ls_kernel_initializer,
                          ls_bias_initializer, ls_kernel_regularizer, ls_bias_regularizer,
                          ls_activity_regularizer, ls_rate, ls_momentum, ls_epsilon, ls_center,
                          ls_scale, ls_beta_initializer, ls_gamma_initializer,
                          ls_moving_mean_initializer, ls_moving_variance_initializer] = ls;
  [[maybe_unused]] auto& [os_kind, os_learning_rate, os_schedule, os_beta_1, os_beta_2, os_epsilon,
                          os_amsgrad, os_momentum, os_nesterov, os_rho, os_centered,
                          os_initial_accumulator_value, os_weight_decay, os_clip, os_clip_value] =
      os;
  [[maybe_unused]] auto& [fs_epochs, fs_batch_size, fs_validation_split, fs_shuffle,
                          fs_sample_weight, fs_class_weight, fs_early_stopping,
                          fs_reduce_lr_on_plateau] = fs;
  [[maybe_unused]] auto& [mm_limit_bytes, mm_mode] = mm;
  [[maybe_unused]] auto& [pl_workers, pl_prefetch] = pl;
}

// ---- Reports with every field set ---------------------------------------------------------------
// Every value distinct and none a default, so that a field that comes back as its default, or as
// another field's value, is caught. Numbers are exact in binary, so that they print and parse back
// as the same text.

TrainingSettings full_settings() {
  TrainingSettings s;
  s.optimizer = OptimizerKind::sgd;
  s.learning_rate = 0.375;
  s.epochs = 3;
  s.batch_size = 48;
  s.validation_split = 0.125;
  s.shuffle = false;
  s.seed = 18446744073709551615u;  // the largest: must not pass through a double or an int64
  s.memory_mode = PoolMode::reserve;
  s.graphs = false;  // known, and not the default (unknown)
  s.threads = 3;
  s.pipeline_workers = 2;
  s.prefetch = 6;
  s.hidden = {16, 8};
  s.activations = {Activation::tanh, Activation::relu};  // mixed: the CSV writes each
  s.layers = "Dense(16 tanh) Dropout(0.25) Dense(8 relu) Dense(1 linear)";
  s.schedule = "CosineDecay";
  return s;
}

ModelReport full_model() {
  ModelReport m;
  m.name = "m-7";
  m.status = ModelStatus::oom;
  m.error = "the pool's cap, 4 KiB, is \"too small\"";  // a comma and quotes: the CSV quotes it
  m.fit.status = FitStatus::stopped;
  m.fit.why = "stopped in epoch 3 at step 1 of 5";
  m.fit.epochs = {
      {0.5, 0.75, 0.625, 0.875, 1.5, 100, 0.0625, 0.4375, {0.75, 0.125}, {0.875, 0.25}, 0.5},
      {0.25,
       0.8125,
       0.375,
       0.9375,
       1.25,
       120,
       0.03125,
       0.5625,
       {0.8125, 0.0625},
       {0.9375, 0.1875},
       0.0625}};
  m.fit.stopped_epoch = 2;
  m.fit.stop_reason =
      "EarlyStopping: val_loss did not improve for 1 epochs (best 0.375 after epoch 2)";
  m.fit.restored_epoch = 1;
  m.fit.rungs = {{1, 0.75, true}, {3, NAN, false}};  // a rung without a value: "nan", as a metric
  m.values = {{"units", 64}, {"learning_rate", 0.5}};
  m.metrics = {{"accuracy", Metric::binary_accuracy}, {"mae", Metric::mean_absolute_error}};
  m.fit.train_s = 2.75;
  // not carried on its own: it comes back as `samples` (FitSamplesIsTheReportsSamples)
  m.fit.samples = 1280;
  m.fit.steps = {{10.0, 10.5}, {10.5, 11.25}};
  m.fit.epoch_spans = {{10.0, 11.25}, {11.5, 12.75}};
  m.fit.input_spans = {{9.75, 10.0}, {10.25, 10.5}};
  m.startup_s = 0.125;
  m.samples_per_s = 232.5;
  m.samples = 640;
  m.train_rows = 320;
  m.solo_s = 2.5;
  m.slowdown = 1.125;
  m.test = {0.4375, 0.5625, {0.5625, 0.3125}};
  m.has_accuracy = m.validated = m.tested = m.fitted = true;
  m.settings = full_settings();
  m.plan = {{"parameters", 512}, {"gradients", 768}};
  m.params = 100;
  m.memory = {4096, 2048, 1024, 1536};
  m.process_device_bytes = 8192;
  m.process_peak_rss_bytes = 16384;
  m.in_use_before_release_bytes = 300;
  m.in_use_after_release_bytes = 200;
  m.backend = "cpu";
  m.device_name = "a CPU";
  m.device_schedule = "blocking_sync";
  m.data = "synthetic";
  m.data_bytes = 800;
  m.index = 6;
  m.host = "node-2";
  m.pid = 42;
  m.mpi_rank = 2;
  m.device = 3;
  m.visible_devices = "3,4";
  m.pack = 2;
  m.pack_members = 5;
  m.pack_boundary = "fit.batch_size 64, not 32 (pack 1)";
  m.sms = 16;
  m.sm_share = 25;
  return m;
}

RunReport full_run() {
  RunReport r;
  r.backend = "cpu";
  r.device_name = "a CPU";
  r.device_schedule = "blocking_sync";
  r.mode = "packed";
  r.data = "synthetic:regression";
  r.data_bytes = 900;
  r.host_peak_rss_bytes = 1048576;
  r.workers_peak_rss_bytes = 2097152;
  r.wall_s = 3.5;
  r.startup_s = 0.25;
  r.train_s = 3.0;
  r.samples_per_s = 213.5;
  r.process_startup_s = 0.0625;
  r.speedup_vs_serial = 1.75;
  r.serial_wall_s = 6.125;
  r.repeat = 2;
  r.concurrency = 4;
  r.concurrency_reason = "--concurrency 4, as asked";
  r.training_threads = 5;
  r.arrangement = Arrangement{2, 5, 3};
  r.pools_kept = true;
  r.injected_fault = "m-7";
  r.resumed_models = 3;
  r.overlap = Overlap{4.0, 1.0};
  r.overlap_kind = "interleaved";
  r.mps = false;
  r.mps_daemon = "kept_out";
  r.sm_partitions = 4;
  // gpu and gpu_note as the run builds them (report_gpus; its forms: test_gpu_report.cpp): one GPU,
  // sampled until it was lost. Before the models, so that their process_device_bytes stay as set.
  GpuSummary gpu;
  gpu.cuda_device = 1;
  gpu.pci_bus_id = "00000000:17:00.0";
  gpu.device = "NVIDIA H200";
  gpu.samples = 7;
  gpu.mean_utilization_percent = 37.5;
  gpu.max_utilization_percent = 87.5;
  gpu.peak_used_bytes = 65536;
  gpu.total_bytes = 131072;
  gpu.sampling_error = "GPU is lost";
  report_gpus(r, {gpu});
  r.error = "the sweep had a bad entry";
  r.auto_choice = {{"chosen", "packed"}};
  r.rank_by = "val_accuracy";
  r.ranking = {"m-7"};
  r.ranks = {{1, "node-2", 2.5, 0.5, 128.25, 3}};
  r.sweep = SweepIdentity{"tiny-sweep", 12, "0123456789abcdef"};
  r.shard = Shard{2, 3};
  SchedulerSpec scheduler;
  scheduler.type = SchedulerKind::hyperband;
  scheduler.metric = "val_accuracy";
  scheduler.maximize = true;
  scheduler.grace_epochs = 2;
  scheduler.reduction_factor = 4;
  scheduler.max_epochs = 32;
  r.scheduler = SchedulerReport{scheduler, {{1, 8, 6, 2, 0.875, 0.75, NAN}}, 640, 2560};
  // A document's part with its figures, and a journal's, which has no run figures.
  r.shards = {{0, "node-1", 1.75, 0.125, 64.5, 4},
              {2, "node-3", std::nullopt, std::nullopt, std::nullopt, 2}};
  r.machine = MachineRecord{"multifit 0.16.0 (commit 0123456789ab) here",
                            2,
                            4,
                            25769803776,
                            3.5,
                            1.25,
                            0.75,
                            0.5,
                            "other processes kept 0.8 of its 2 cores busy",
                            427.0,
                            "run 2"};
  r.models = {full_model()};
  return r;
}

// The document's form of full_model(), written out by hand from study/report/report.h's comments.
const char* const kFullModelDocument = R"doc({
  "index": 6,
  "name": "m-7",
  "values": {"learning_rate": 0.5, "units": 64},
  "settings": {"optimizer": "sgd", "learning_rate": 0.375, "epochs": 3, "batch_size": 48,
               "validation_split": 0.125, "shuffle": false, "seed": 18446744073709551615,
               "memory_mode": "reserve", "graphs": false, "threads": 3, "hidden": [16, 8], "activations": ["tanh", "relu"],
               "pipeline_workers": 2, "prefetch": 6,
               "layers": "Dense(16 tanh) Dropout(0.25) Dense(8 relu) Dense(1 linear)", "schedule": "CosineDecay"},
  "status": "oom",
  "error": "the pool's cap, 4 KiB, is \"too small\"",
  "backend": "cpu",
  "device": 3,
  "device_name": "a CPU",
  "device_schedule": "blocking_sync",
  "cuda_visible_devices": "3,4",
  "host": "node-2",
  "pid": 42,
  "mpi_rank": 2,
  "pack": 2,
  "pack_members": 5,
  "pack_boundary": "fit.batch_size 64, not 32 (pack 1)",
  "sms": 16,
  "sm_share": 25,
  "data": {"source": "synthetic", "bytes": 800},
  "startup_s": 0.125,
  "fit": {"status": "stopped", "why": "stopped in epoch 3 at step 1 of 5", "stopped_epoch": 2,
          "stop_reason": "EarlyStopping: val_loss did not improve for 1 epochs (best 0.375 after epoch 2)",
          "restored_epoch": 1, "rungs": [{"epochs": 1, "value": 0.75, "kept": true}, {"epochs": 3, "value": "nan", "kept": false}]},
  "epochs": [
    {"loss": 0.5, "accuracy": 0.75, "val_loss": 0.625, "val_accuracy": 0.875, "seconds": 1.5, "samples_per_s": 100.0,
     "input_wait_s": 0.0625, "input_busy_s": 0.4375, "metrics": {"accuracy": 0.75, "mae": 0.125},
     "val_metrics": {"accuracy": 0.875, "mae": 0.25}, "learning_rate": 0.5},
    {"loss": 0.25, "accuracy": 0.8125, "val_loss": 0.375, "val_accuracy": 0.9375, "seconds": 1.25, "samples_per_s": 120.0,
     "input_wait_s": 0.03125, "input_busy_s": 0.5625, "metrics": {"accuracy": 0.8125, "mae": 0.0625},
     "val_metrics": {"accuracy": 0.9375, "mae": 0.1875}, "learning_rate": 0.0625}
  ],
  "train_rows": 320,
  "samples": 640,
  "train_s": 2.75,
  "samples_per_s": 232.5,
  "solo_s": 2.5,
  "slowdown": 1.125,
  "metrics": {"accuracy": true, "validation": true, "test": true,
              "list": [{"name": "accuracy", "kind": "binary_accuracy"}, {"name": "mae", "kind": "mean_absolute_error"}]},
  "test_loss": 0.4375,
  "test_accuracy": 0.5625,
  "test_metrics": {"accuracy": 0.5625, "mae": 0.3125},
  "params": 100,
  "memory": {
    "cap_bytes": 4096,
    "reserved_bytes": 2048,
    "in_use_bytes": 1024,
    "peak_bytes": 1536,
    "process_device_bytes": 8192,
    "process_peak_rss_bytes": 16384,
    "in_use_before_release_bytes": 300,
    "in_use_after_release_bytes": 200,
    "plan": [{"name": "parameters", "bytes": 512}, {"name": "gradients", "bytes": 768}]
  }
})doc";
// And its step timeline, which the one form has and the document leaves out.
const char* const kFullModelTimeline =
    R"({"steps": [[10.0, 10.5], [10.5, 11.25]], "epochs": [[10.0, 11.25], [11.5, 12.75]],
                                           "input": [[9.75, 10.0], [10.25, 10.5]]})";

// A default ModelReport: nothing measured, every metric absent (null), nothing reached.
const char* const kEmptyModelDocument = R"({
  "index": 0,
  "name": "",
  "values": {},
  "settings": null,
  "status": "ok",
  "error": null,
  "backend": null,
  "device": 0,
  "device_name": null,
  "device_schedule": null,
  "cuda_visible_devices": null,
  "host": null,
  "pid": 0,
  "mpi_rank": null,
  "pack": null,
  "pack_members": null,
  "pack_boundary": null,
  "sms": null,
  "sm_share": null,
  "data": {"source": null, "bytes": 0},
  "startup_s": null,
  "fit": null,
  "epochs": [],
  "train_rows": 0,
  "samples": 0,
  "train_s": null,
  "samples_per_s": null,
  "solo_s": null,
  "slowdown": null,
  "metrics": {"accuracy": false, "validation": false, "test": false, "list": []},
  "test_loss": null,
  "test_accuracy": null,
  "test_metrics": {},
  "params": 0,
  "memory": {
    "cap_bytes": 0,
    "reserved_bytes": 0,
    "in_use_bytes": 0,
    "peak_bytes": 0,
    "process_device_bytes": null,
    "process_peak_rss_bytes": null,
    "in_use_before_release_bytes": null,
    "in_use_after_release_bytes": null,
    "plan": []
  }
})";
const char* const kEmptyModelTimeline = R"({"steps": [], "epochs": [], "input": []})";

// The one form of a model: its document with its timeline.
std::string with_timeline(const char* document, const char* timeline) {
  json form = json::parse(document);
  form["timeline"] = json::parse(timeline);
  return form.dump();
}

// The run part of full_run()'s document, its models left to "models".
std::string full_run_document(const std::string& models) {
  return R"doc({
  "backend": "cpu",
  "device_name": "a CPU",
  "device_schedule": "blocking_sync",
  "mps": false,
  "mps_daemon": "kept_out",
  "sm_partitions": 4,
  "mode": "packed",
  "concurrency": 4,
  "repeat": 2,
  "concurrency_reason": "--concurrency 4, as asked",
  "training_threads": 5,
  "arrangement": {"cores": 2, "at_once": 5, "threads_each": 3},
  "pools_kept": true,
  "injected_fault": "m-7",
  "resumed_models": 3,
  "data": {"source": "synthetic:regression", "bytes": 900},
  "host_peak_rss_bytes": 1048576,
  "workers_peak_rss_bytes": 2097152,
  "process_startup_s": 0.0625,
  "startup_s": 0.25,
  "train_s": 3.0,
  "wall_s": 3.5,
  "samples_per_s": 213.5,
  "speedup_vs_serial": 1.75,
  "serial_wall_s": 6.125,
  "overlap": {"fraction": 0.25, "busy_s": 4.0, "concurrent_s": 1.0, "kind": "interleaved"},
  "gpu": {"device": "NVIDIA H200", "samples": 7, "mean_utilization_percent": 37.5, "max_utilization_percent": 87.5,
          "peak_used_bytes": 65536, "total_bytes": 131072},
  "gpu_note": "GPU is lost",
  "error": "the sweep had a bad entry",
  "auto": {"chosen": "packed"},
  "rank_by": "val_accuracy",
  "ranking": ["m-7"],
  "scheduler": {"spec": {"type": "hyperband", "metric": "val_accuracy", "mode": "max", "grace_epochs": 2,
                         "reduction_factor": 4, "max_epochs": 32},
                "rungs": [{"bracket": 1, "epochs": 8, "trials": 6, "kept": 2, "best": 0.875, "median": 0.75, "worst": "nan"}],
                "samples": 640, "full_samples": 2560, "compute_fraction": 0.25},
  "ranks": [{"index": 1, "host": "node-2", "wall_s": 2.5, "startup_s": 0.5, "samples_per_s": 128.25, "models": 3}],
  "sweep": {"name": "tiny-sweep", "models": 12, "fingerprint": "0123456789abcdef"},
  "shard": {"index": 2, "count": 3},
  "shards": [{"index": 0, "host": "node-1", "wall_s": 1.75, "startup_s": 0.125, "samples_per_s": 64.5, "models": 4},
             {"index": 2, "host": "node-3", "wall_s": null, "startup_s": null, "samples_per_s": null, "models": 2}],
  "machine": {"multifit": "multifit 0.16.0 (commit 0123456789ab) here", "cores": 2, "hardware_threads": 4,
              "memory_total_bytes": 25769803776, "load_average_before": 3.5, "load_average_after": 1.25,
              "others_busy_cores": 0.75, "cpu_pressure": 0.5, "busy": "other processes kept 0.8 of its 2 cores busy",
              "quiet_samples_per_s": 427.0, "quiet_from": "run 2"},
  "unjudged": "a busy machine: other processes kept 0.8 of its 2 cores busy; it trained at 0.50x the samples/s of its mode quiet (214 against 427, run 2)",
  "models": )doc" +
         models + "}";
}

const char* const kEmptyRunDocumentUpToModels = R"({
    "backend": null, "device_name": null, "device_schedule": null, "mps": null, "mps_daemon": null, "sm_partitions": null, "mode": "serial", "repeat": 1, "concurrency": 1, "concurrency_reason": null,
    "training_threads": null, "arrangement": null, "pools_kept": false, "injected_fault": null, "resumed_models": 0,
    "data": {"source": null, "bytes": 0},
    "host_peak_rss_bytes": 0, "workers_peak_rss_bytes": null, "process_startup_s": null, "startup_s": null,
    "train_s": null, "wall_s": 0.0, "samples_per_s": null, "speedup_vs_serial": null, "serial_wall_s": null,
    "overlap": null, "gpu": null, "gpu_note": null, "error": null, "auto": null, "rank_by": null,
    "ranking": [], "scheduler": null, "ranks": [], "sweep": null, "shard": null, "shards": [], "machine": null,
    "unjudged": "wall 0ms, under 0.1 s", "models": )";

// Compares as text, so that a number's type shows (3 and 3.0 differ) and a failure prints both.
// Keys are in nlohmann::json's (sorted) order on both sides.
void expect_json(const json& got, const std::string& literal) {
  EXPECT_EQ(got.dump(2), json::parse(literal).dump(2));
}

// A fresh folder per test, removed afterwards.
class ReportFiles : public testing::Test {
 protected:
  void SetUp() override {
    const testing::TestInfo& t = *testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("mf_" + std::to_string(getpid()) + "_" + t.test_suite_name() + "." + t.name());
    std::filesystem::remove_all(dir_);
    ASSERT_TRUE(std::filesystem::create_directories(dir_));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // The names in the folder: the file written and nothing else (no temporary left behind).
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_))
      names.push_back(entry.path().filename());
    return names;
  }
  static std::string read(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::filesystem::path dir_;
};

// ---- A model's one form -------------------------------------------------------------------------

TEST(ReportForm, EveryModelFieldAsWritten) {
  expect_json(json(full_model()), with_timeline(kFullModelDocument, kFullModelTimeline));
}

TEST(ReportForm, ADefaultModelHasNullsWhereNothingWasMeasured) {
  expect_json(json(ModelReport{}), with_timeline(kEmptyModelDocument, kEmptyModelTimeline));
}

// A default TrainingSettings: graphs unknown (null) until the model is built.
TEST(ReportForm, SettingsOfADefaultModelHaveGraphsUnknown) {
  ModelReport m;
  m.settings = TrainingSettings{};
  expect_json(json(m)["settings"],
              R"({"optimizer": "adam", "learning_rate": 0.0, "epochs": 0, "batch_size": 0,
    "validation_split": 0.0, "shuffle": true, "seed": 0, "memory_mode": "grow", "graphs": null, "threads": null,
    "hidden": [], "activations": [], "pipeline_workers": null, "prefetch": null, "layers": "", "schedule": ""})");
}

// Metrics that do not exist are null, metrics computed as not finite are strings.
TEST(ReportForm, AbsentMetricsAreNullAndNonFiniteOnesAreStrings) {
  ModelReport m;
  m.fit.epochs = {{NAN, 0.5, 0.25, 0.75, 1.0, 2.0, 0, 0, {}, {}},
                  {INFINITY, -INFINITY, NAN, NAN, 0.5, 4.0, 0, 0, {}, {}}};
  m.test = {0.5, 0.25, {}};
  m.fit.train_s = 1.5;
  m.startup_s = NAN;
  m.samples_per_s = -INFINITY;
  m.solo_s = INFINITY;
  // has_accuracy, validated, tested and fitted all false: accuracy, val_*, test_* and train_s are
  // null.
  const json doc = m;
  EXPECT_EQ(
      doc["epochs"].dump(),
      R"([{"accuracy":null,"input_busy_s":0.0,"input_wait_s":0.0,"learning_rate":null,"loss":"nan","metrics":{},"samples_per_s":2.0,"seconds":1.0,"val_accuracy":null,"val_loss":null,"val_metrics":{}},)"
      R"({"accuracy":null,"input_busy_s":0.0,"input_wait_s":0.0,"learning_rate":null,"loss":"inf","metrics":{},"samples_per_s":4.0,"seconds":0.5,"val_accuracy":null,"val_loss":null,"val_metrics":{}}])");
  EXPECT_EQ(doc["train_s"], json());
  EXPECT_EQ(doc["test_loss"], json());
  EXPECT_EQ(doc["test_accuracy"], json());
  EXPECT_EQ(doc["startup_s"], "nan");
  EXPECT_EQ(doc["samples_per_s"], "-inf");
  EXPECT_EQ(doc["solo_s"], "inf");
  EXPECT_EQ(doc["slowdown"], json());
  EXPECT_EQ(doc["metrics"].dump(),
            R"({"accuracy":false,"list":[],"test":false,"validation":false})");

  // accuracies and validation metrics exist, test metrics not yet
  m.has_accuracy = m.validated = true;
  EXPECT_EQ(
      json(m)["epochs"][1].dump(),
      R"({"accuracy":"-inf","input_busy_s":0.0,"input_wait_s":0.0,"learning_rate":null,"loss":"inf","metrics":{},"samples_per_s":4.0,"seconds":0.5,"val_accuracy":"nan","val_loss":"nan","val_metrics":{}})");
  EXPECT_EQ(json(m)["test_loss"], json());
  m.tested = true;
  EXPECT_EQ(json(m)["test_loss"], 0.5);
  EXPECT_EQ(json(m)["test_accuracy"], 0.25);
  m.has_accuracy = false;  // mse: a test loss, no test accuracy
  EXPECT_EQ(json(m)["test_accuracy"], json());
  m.fitted = true;
  EXPECT_EQ(json(m)["train_s"], 1.5);
  EXPECT_EQ(json(m)["metrics"].dump(),
            R"({"accuracy":false,"list":[],"test":true,"validation":true})");
}

// ---- The document -------------------------------------------------------------------------------

TEST(ReportDocument, EveryRunFieldAsWrittenAndTheModelsWithoutTheirTimeline) {
  expect_json(json(full_run()), full_run_document(std::string("[") + kFullModelDocument + "]"));
}

TEST(ReportDocument, ADefaultRunHasNullsWhereNothingWasMeasured) {
  expect_json(json(RunReport{}), std::string(kEmptyRunDocumentUpToModels) + "[]}");
}

TEST_F(ReportFiles, OneRunIsTheDocumentAndSeveralAreRunsUnderModeAll) {
  write_json({full_run()}, path("one.json"));
  const std::string one = read(path("one.json"));
  ASSERT_FALSE(one.empty());
  EXPECT_EQ(one.back(), '\n');
  expect_json(json::parse(one), full_run_document(std::string("[") + kFullModelDocument + "]"));
  EXPECT_EQ(files(), std::vector<std::string>{"one.json"});

  RunReport serial;
  serial.models = {ModelReport{}};
  RunReport packed = full_run();
  packed.repeat = 1;
  write_json({serial, packed}, path("all.json"));
  json all = json::parse(read(path("all.json")));
  ASSERT_EQ(all["runs"][1]["repeat"], 1);
  all["runs"][1]["repeat"] = 2;  // as full_run_document writes it
  expect_json(
      all,
      std::string(
          R"({"answer": "not to be judged (serial: wall 0ms, under 0.1 s; packed: a busy machine: )"
          R"(other processes kept 0.8 of its 2 cores busy; it trained at 0.50x the samples/s of )"
          R"(its mode quiet (214 against 427, run 2)): packed finished 1.75x sooner than )"
          R"(serial; each pack took 1.12x the time its models took alone, one after another", )"
          R"("mode": "all", "runs": [)") +
          kEmptyRunDocumentUpToModels + "[" + kEmptyModelDocument + "]}, " +
          full_run_document(std::string("[") + kFullModelDocument + "]") + "]}");
}

// --repeat: every run, then each mode's figures over its runs as median, min and max.
TEST_F(ReportFiles, RepeatedRunsAreSummedUpPerModeAsMedianMinAndMax) {
  std::vector<RunReport> runs(3);
  for (int i = 0; i < 3; ++i) {
    runs[size_t(i)].repeat = i + 1;
    runs[size_t(i)].wall_s = std::vector<double>{3.0, 1.0, 2.5}[size_t(i)];
    runs[size_t(i)].models = {ModelReport{}, ModelReport{}};
    runs[size_t(i)].models[0].slowdown = 1.0 + i;
    runs[size_t(i)].models[1].slowdown = 3.0;  // means 2, 2.5, 3
  }
  runs[1].speedup_vs_serial = 1.5;
  write_json(runs, path("repeated.json"));
  const json doc = json::parse(read(path("repeated.json")));
  EXPECT_EQ(doc["mode"], "serial") << "one mode, repeated";
  EXPECT_EQ(doc["repeat"], 3);
  ASSERT_EQ(doc["runs"].size(), 3u);
  EXPECT_EQ(doc["runs"][2]["repeat"], 3);
  expect_json(doc["repeats"], R"([{"mode": "serial", "runs": 3,
      "wall_s": {"median": 2.5, "min": 1.0, "max": 3.0}, "startup_s": null, "train_s": null, "samples_per_s": null,
      "speedup_vs_serial": {"median": 1.5, "min": 1.5, "max": 1.5},
      "mean_slowdown": {"median": 2.5, "min": 2.0, "max": 3.0}}])");
  EXPECT_EQ(spread_of({4.0, 1.0, 3.0, 2.0})->median, 2.5) << "an even count: the middle two's mean";
  EXPECT_FALSE(spread_of({}));
}

// What `multifit merge` reads back of a document to check its parts (study/sweep/merge.cpp): the
// sweep and the shard, as written; a shard that is no part of N parts is refused, not read as one.
TEST(ReportDocument, TheSweepAndTheShardReadBackAsWritten) {
  const json doc = full_run();
  const SweepIdentity sweep = doc.at("sweep").get<SweepIdentity>();
  EXPECT_EQ(sweep.name, "tiny-sweep");
  EXPECT_EQ(sweep.models, 12u);
  EXPECT_EQ(sweep.fingerprint, "0123456789abcdef");
  const Shard shard = doc.at("shard").get<Shard>();
  EXPECT_EQ(shard.index, 2u);
  EXPECT_EQ(shard.count, 3u);
  EXPECT_EQ(to_string(shard), "2/3");
  EXPECT_THROW(json::parse(R"({"index": 3, "count": 3})").get<Shard>(), std::invalid_argument);
  EXPECT_THROW(json::parse(R"({"index": 0, "count": 0})").get<Shard>(), std::invalid_argument);
  EXPECT_THROW(json::parse(R"({"index": 0})").get<Shard>(), json::exception);
}

// ---- The document read back --------------------------------------------------------------------
// A run read back from its one JSON form (from_json, study/report/run_json.cpp) and written again
// is the same JSON, compared field by field: full_run() (none a default, so that a field that is
// not read back shows as its default) and a default run. Real runs: test_report_json.cpp.

TEST(RunReportJson, EveryFieldReadBackIsWrittenAgainAsItWas) {
  const json document = full_run();
  expect_same_fields(written_again(document), document);
  // And the fields themselves, where a value's form could hide a difference.
  const RunReport back = document.get<RunReport>();
  EXPECT_EQ(back.overlap_kind, "interleaved");
  ASSERT_TRUE(back.scheduler);
  EXPECT_TRUE(std::isnan(back.scheduler->rungs[0].worst));
  EXPECT_EQ(back.machine->cpu_pressure, 0.5);
  EXPECT_EQ(back.models[0].device_schedule, "blocking_sync");
  EXPECT_TRUE(back.models[0].fit.steps.empty()) << "the document has no timeline";
}

TEST(RunReportJson, ADefaultRunReadBackIsWrittenAgainAsItWas) {
  const json document = RunReport{};
  expect_same_fields(written_again(document), document);
}

// A field that reads back wrong must fail the comparison, and name the field.
TEST(RunReportJson, TheComparisonNamesAFieldThatDiffers) {
  json changed = full_run();
  changed["ranks"][0]["host"] = "node-9";
  EXPECT_NONFATAL_FAILURE(expect_same_fields(written_again(changed), json(full_run())),
                          "the document.ranks[0].host");
}

// A field missing from a document is said by its name; one added to the form later reads as its
// default.
TEST(RunReportJson, AMissingFieldIsNamedAndALaterOneReadsAsItsDefault) {
  json document = full_run();
  document.erase("wall_s");
  try {
    (void)document.get<RunReport>();
    ADD_FAILURE() << "read without its wall_s";
  } catch (const json::exception& e) {
    EXPECT_NE(std::string(e.what()).find("'wall_s'"), std::string::npos) << e.what();
  }
  document = full_run();
  document.erase("machine");
  EXPECT_FALSE(document.get<RunReport>().machine);
}

// ---- The CSV ------------------------------------------------------------------------------------

const char* const kCsvHeader =
    "run_mode,run_backend,run_repeat,run_concurrency,run_wall_s,run_startup_s,run_train_s,run_"
    "samples_per_s,"
    "run_speedup_vs_serial,overlap,models,rank_by,index,name,status,rank,optimizer,learning_rate,"
    "batch_size,"
    "epochs_asked,validation_split,seed,hidden,activation,loss,accuracy,val_loss,val_accuracy,"
    "error,device,host,"
    "mpi_rank,startup_s,train_s,samples_per_s,input_wait_s,input_busy_s,solo_s,slowdown,test_loss,"
    "test_accuracy,params,pack,pack_members,pack_boundary,sms,sm_share,epochs,"
    "cap_bytes,reserved_bytes,peak_bytes,data_bytes,process_peak_rss_bytes,process_device_bytes,"
    "graphs,threads,"
    "pipeline_workers,prefetch,layers,schedule,stopped_epoch,stop_reason,restored_epoch,values,"
    "rungs_kept,"
    "final_learning_rate,mae,mse,"
    "val_mae,val_mse,test_mae,test_mse\n";

TEST_F(ReportFiles, TheCsvRowHoldsItsRunsAndItsModelsFigures) {
  RunReport serial;  // a run of one default model: its empty fields stay empty
  serial.models = {ModelReport{}};
  RunReport graphs_on = serial;  // settings known, graphs on; the other metric not finite
  graphs_on.models[0].settings = full_settings();
  graphs_on.models[0].settings->graphs = true;
  graphs_on.models[0].startup_s = NAN;
  graphs_on.models[0].slowdown = INFINITY;
  RunReport graphs_unknown = serial;
  graphs_unknown.models[0].settings = TrainingSettings{};
  write_csv({full_run(), serial, graphs_on, graphs_unknown}, path("r.csv"));
  EXPECT_EQ(
      read(path("r.csv")),
      std::string(kCsvHeader) +
          "packed,cpu,2,4,3.5,0.25,3.0,213.5,1.75,0.25,1,val_accuracy,6,m-7,oom,1,sgd,0.375,48,3,0."
          "125,18446744073709551615,16x8,tanh/relu,0.25,0.8125,0.375,0.9375,\"the pool's cap, 4 "
          "KiB, is \"\"too "
          "small\"\"\",3,node-2,2,0.125,2.75,232.5,0.09375,1.0,2.5,1.125,0.4375,0.5625,100,2,5,\"fit."
          "batch_size 64, not 32 (pack 1)\",16,"
          "25,2,4096,2048,1536,800,16384,8192,false,3,2,6,Dense(16 tanh) Dropout(0.25) Dense(8 "
          "relu) Dense(1 linear),CosineDecay,2,EarlyStopping: val_loss did not improve for 1 "
          "epochs (best 0.375 after epoch "
          "2),1,\"{\"\"learning_rate\"\":0.5,\"\"units\"\":64}\",1,0.0625,0.0625,,0.1875,,0.3125,\n"
          "serial,,1,1,0.0,,,,,,1,,0,,ok,,,,,,,,,,,,,,,0,,,,,,0.0,0.0,,,,,0,,,,,,0,0,0,0,0,,,,,,,,,,"
          ",,,,,,,,,,\n"
          "serial,,1,1,0.0,,,,,,1,,0,,ok,,sgd,0.375,48,3,0.125,18446744073709551615,16x8,tanh/"
          "relu,,,,,,0,,,nan,,,0.0,0.0,,inf,,,0,,,,,,0,0,0,0,0,,,true,3,2,6,Dense(16 tanh) "
          "Dropout(0.25) Dense(8 relu) Dense(1 linear),CosineDecay,,,,,,,,,,,,\n"
          "serial,,1,1,0.0,,,,,,1,,0,,ok,,adam,0.0,0,0,0.0,0,0,,,,,,,0,,,,,,0.0,0.0,,,,,0,,,,,,0,0,"
          "0,0,0,,,,,,,,,,,,,,,,,,,,\n");
  EXPECT_EQ(files(), std::vector<std::string>{"r.csv"});
}

TEST_F(ReportFiles, ARunWithoutModelsHasOnlyTheHeader) {
  write_csv({RunReport{}}, path("r.csv"));
  EXPECT_EQ(read(path("r.csv")), kCsvHeader);
}

// ---- The pipe: a child's report to its parent ---------------------------------------------------

ModelReport through_the_pipe(const ModelReport& m) {
  return json::parse(json(m).dump()).get<ModelReport>();  // as one line through the pipe
}

void expect_same_track(const Track& got, const Track& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].begin_s, want[i].begin_s) << what << "[" << i << "]";
    EXPECT_EQ(got[i].end_s, want[i].end_s) << what << "[" << i << "]";
  }
}

// Doubles compared so that NaN equals NaN (a metric computed as NaN must come back NaN).
#define EXPECT_SAME_DOUBLE(got, want)                        \
  do {                                                       \
    const double got_ = (got), want_ = (want);               \
    if (std::isnan(want_)) {                                 \
      EXPECT_TRUE(std::isnan(got_)) << #got << ": " << got_; \
    } else {                                                 \
      EXPECT_EQ(got_, want_) << #got;                        \
    }                                                        \
  } while (0)

void expect_same_settings(const std::optional<TrainingSettings>& got,
                          const std::optional<TrainingSettings>& want) {
  ASSERT_EQ(got.has_value(), want.has_value()) << "settings";
  if (!want) return;
  EXPECT_EQ(got->optimizer, want->optimizer);
  EXPECT_EQ(got->learning_rate, want->learning_rate);
  EXPECT_EQ(got->epochs, want->epochs);
  EXPECT_EQ(got->batch_size, want->batch_size);
  EXPECT_EQ(got->validation_split, want->validation_split);
  EXPECT_EQ(got->shuffle, want->shuffle);
  EXPECT_EQ(got->seed, want->seed);
  EXPECT_EQ(got->memory_mode, want->memory_mode);
  EXPECT_EQ(got->graphs, want->graphs);
  EXPECT_EQ(got->threads, want->threads);
  EXPECT_EQ(got->hidden, want->hidden);
  EXPECT_EQ(got->activations, want->activations);
  EXPECT_EQ(got->pipeline_workers, want->pipeline_workers);
  EXPECT_EQ(got->prefetch, want->prefetch);
  EXPECT_EQ(got->layers, want->layers);
  EXPECT_EQ(got->schedule, want->schedule);
}

// Every field of the report, one by one.
void expect_same_report(const ModelReport& got, const ModelReport& want) {
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.status, want.status);
  EXPECT_EQ(got.error, want.error);
  EXPECT_EQ(got.fit.status, want.fit.status);
  EXPECT_EQ(got.fit.why, want.fit.why);
  ASSERT_EQ(got.fit.epochs.size(), want.fit.epochs.size());
  for (size_t e = 0; e < want.fit.epochs.size(); ++e) {
    SCOPED_TRACE("epoch " + std::to_string(e));
    EXPECT_SAME_DOUBLE(got.fit.epochs[e].loss, want.fit.epochs[e].loss);
    EXPECT_SAME_DOUBLE(got.fit.epochs[e].accuracy, want.fit.epochs[e].accuracy);
    EXPECT_SAME_DOUBLE(got.fit.epochs[e].val_loss, want.fit.epochs[e].val_loss);
    EXPECT_SAME_DOUBLE(got.fit.epochs[e].val_accuracy, want.fit.epochs[e].val_accuracy);
    EXPECT_SAME_DOUBLE(got.fit.epochs[e].seconds, want.fit.epochs[e].seconds);
    EXPECT_SAME_DOUBLE(got.fit.epochs[e].samples_per_s, want.fit.epochs[e].samples_per_s);
    EXPECT_EQ(got.fit.epochs[e].input_wait_s, want.fit.epochs[e].input_wait_s);
    EXPECT_EQ(got.fit.epochs[e].input_busy_s, want.fit.epochs[e].input_busy_s);
    EXPECT_EQ(got.fit.epochs[e].metrics, want.fit.epochs[e].metrics);
    EXPECT_EQ(got.fit.epochs[e].val_metrics, want.fit.epochs[e].val_metrics);
    EXPECT_SAME_DOUBLE(got.fit.epochs[e].learning_rate, want.fit.epochs[e].learning_rate);
  }
  EXPECT_EQ(got.fit.stopped_epoch, want.fit.stopped_epoch);
  EXPECT_EQ(got.fit.stop_reason, want.fit.stop_reason);
  EXPECT_EQ(got.fit.restored_epoch, want.fit.restored_epoch);
  ASSERT_EQ(got.fit.rungs.size(), want.fit.rungs.size());
  for (size_t i = 0; i < want.fit.rungs.size(); ++i) {
    EXPECT_EQ(got.fit.rungs[i].epochs, want.fit.rungs[i].epochs);
    EXPECT_SAME_DOUBLE(got.fit.rungs[i].value, want.fit.rungs[i].value);
    EXPECT_EQ(got.fit.rungs[i].kept, want.fit.rungs[i].kept);
  }
  EXPECT_EQ(got.values, want.values);
  EXPECT_EQ(got.metrics, want.metrics);
  EXPECT_EQ(got.test.metrics, want.test.metrics);
  EXPECT_EQ(got.fit.train_s, want.fit.train_s);
  // The form carries one count of rows trained on, `samples` (which the worker sets from
  // fit.samples, study/model_worker.cpp); fit.samples comes back as it.
  EXPECT_EQ(got.fit.samples, want.samples);
  expect_same_track(got.fit.steps, want.fit.steps, "fit.steps");
  expect_same_track(got.fit.epoch_spans, want.fit.epoch_spans, "fit.epoch_spans");
  expect_same_track(got.fit.input_spans, want.fit.input_spans, "fit.input_spans");
  EXPECT_EQ(got.startup_s.has_value(), want.startup_s.has_value());
  if (want.startup_s) EXPECT_SAME_DOUBLE(*got.startup_s, *want.startup_s);
  EXPECT_EQ(got.samples_per_s.has_value(), want.samples_per_s.has_value());
  if (want.samples_per_s) EXPECT_SAME_DOUBLE(*got.samples_per_s, *want.samples_per_s);
  EXPECT_EQ(got.samples, want.samples);
  EXPECT_EQ(got.train_rows, want.train_rows);
  EXPECT_EQ(got.solo_s, want.solo_s);
  EXPECT_EQ(got.slowdown, want.slowdown);
  EXPECT_SAME_DOUBLE(got.test.loss, want.test.loss);
  EXPECT_SAME_DOUBLE(got.test.accuracy, want.test.accuracy);
  EXPECT_EQ(got.has_accuracy, want.has_accuracy);
  EXPECT_EQ(got.validated, want.validated);
  EXPECT_EQ(got.tested, want.tested);
  EXPECT_EQ(got.fitted, want.fitted);
  expect_same_settings(got.settings, want.settings);
  ASSERT_EQ(got.plan.size(), want.plan.size());
  for (size_t i = 0; i < want.plan.size(); ++i) {
    EXPECT_EQ(got.plan[i].name, want.plan[i].name) << "plan[" << i << "]";
    EXPECT_EQ(got.plan[i].bytes, want.plan[i].bytes) << "plan[" << i << "]";
  }
  EXPECT_EQ(got.params, want.params);
  EXPECT_EQ(got.memory.cap_bytes, want.memory.cap_bytes);
  EXPECT_EQ(got.memory.reserved_bytes, want.memory.reserved_bytes);
  EXPECT_EQ(got.memory.in_use_bytes, want.memory.in_use_bytes);
  EXPECT_EQ(got.memory.peak_bytes, want.memory.peak_bytes);
  EXPECT_EQ(got.process_device_bytes, want.process_device_bytes);
  EXPECT_EQ(got.process_peak_rss_bytes, want.process_peak_rss_bytes);
  EXPECT_EQ(got.in_use_before_release_bytes, want.in_use_before_release_bytes);
  EXPECT_EQ(got.in_use_after_release_bytes, want.in_use_after_release_bytes);
  EXPECT_EQ(got.backend, want.backend);
  EXPECT_EQ(got.device_name, want.device_name);
  EXPECT_EQ(got.device_schedule, want.device_schedule);
  EXPECT_EQ(got.data, want.data);
  EXPECT_EQ(got.data_bytes, want.data_bytes);
  EXPECT_EQ(got.index, want.index);
  EXPECT_EQ(got.host, want.host);
  EXPECT_EQ(got.pid, want.pid);
  EXPECT_EQ(got.mpi_rank, want.mpi_rank);
  EXPECT_EQ(got.device, want.device);
  EXPECT_EQ(got.visible_devices, want.visible_devices);
  EXPECT_EQ(got.pack, want.pack);
  EXPECT_EQ(got.pack_members, want.pack_members);
  EXPECT_EQ(got.pack_boundary, want.pack_boundary);
  EXPECT_EQ(got.sms, want.sms);
  EXPECT_EQ(got.sm_share, want.sm_share);
}

TEST(ReportPipe, EveryFieldComesBackAsSent) {
  const ModelReport sent = full_model();
  const ModelReport back = through_the_pipe(sent);
  expect_same_report(back, sent);
  EXPECT_EQ(json(back).dump(), json(sent).dump());  // and it writes the same form again
}

// Each status, each fit status, and the flags of which metrics exist, one at a time off: a flag or
// a status read back from the wrong key or hard-coded is caught.
TEST(ReportPipe, StatusesAndFlagsComeBackAsSent) {
  for (ModelStatus status : {ModelStatus::ok, ModelStatus::diverged, ModelStatus::oom,
                             ModelStatus::failed, ModelStatus::stopped})
    for (FitStatus fit_status : {FitStatus::ok, FitStatus::diverged, FitStatus::stopped}) {
      ModelReport sent = full_model();
      sent.status = status;
      sent.fit.status = fit_status;
      const ModelReport back = through_the_pipe(sent);
      EXPECT_EQ(back.status, status) << to_string(status);
      EXPECT_EQ(back.fit.status, fit_status) << int(fit_status);
    }
  for (bool ModelReport::*flag : {&ModelReport::has_accuracy, &ModelReport::validated,
                                  &ModelReport::tested, &ModelReport::fitted}) {
    ModelReport sent = full_model();
    sent.*flag = false;
    // fit did not run: no train_s, and no status or why of its own
    if (flag == &ModelReport::fitted) {
      sent.fit.train_s = 0;
      sent.fit.status = FitStatus::ok;
      sent.fit.why.clear();
      sent.fit.stopped_epoch.reset(), sent.fit.stop_reason.clear(), sent.fit.restored_epoch.reset();
      sent.fit.rungs.clear();
    }
    if (flag == &ModelReport::tested) sent.test = {};  // NaN: none
    if (flag == &ModelReport::has_accuracy || flag == &ModelReport::validated)
      for (EpochMetrics& e : sent.fit.epochs) {
        if (flag == &ModelReport::has_accuracy) e.accuracy = e.val_accuracy = NAN;
        if (flag == &ModelReport::validated) e.val_loss = e.val_accuracy = NAN;
      }
    if (flag == &ModelReport::has_accuracy) sent.test.accuracy = NAN;
    expect_same_report(through_the_pipe(sent), sent);
  }
}

// A child's report with nothing measured: absent stays absent, empty stays empty, and a metric
// computed as not finite comes back so.
TEST(ReportPipe, AnEmptyReportComesBackEmpty) {
  ModelReport sent;
  sent.fit.epochs = {
      {NAN, NAN, NAN, NAN, 0.25, 8.0, 0, 0, {}, {}}};  // an epoch whose loss was computed as NaN
  sent.test = {INFINITY, NAN, {}};
  sent.tested = true;
  sent.slowdown = -INFINITY;
  const ModelReport back = through_the_pipe(sent);
  expect_same_report(back, sent);
  EXPECT_FALSE(back.startup_s.has_value());
  EXPECT_FALSE(back.samples_per_s.has_value());
  EXPECT_FALSE(back.solo_s.has_value());
  EXPECT_FALSE(back.settings.has_value());
  EXPECT_FALSE(back.pack.has_value());
  EXPECT_FALSE(back.process_device_bytes.has_value());
  EXPECT_FALSE(back.process_peak_rss_bytes.has_value());
  EXPECT_FALSE(back.in_use_before_release_bytes.has_value());
  EXPECT_TRUE(std::isinf(back.test.loss));
  EXPECT_TRUE(std::isnan(back.fit.epochs[0].loss));
  EXPECT_EQ(back.slowdown, -INFINITY);
  EXPECT_TRUE(back.fit.steps.empty());
}

// Settings known with graphs unknown, and with graphs on: each comes back as it went.
TEST(ReportPipe, SettingsComeBackWithGraphsUnknownOnOrOff) {
  for (std::optional<bool> graphs :
       {std::optional<bool>(), std::optional<bool>(true), std::optional<bool>(false)}) {
    ModelReport sent = full_model();
    sent.settings->graphs = graphs;
    expect_same_settings(through_the_pipe(sent).settings, sent.settings);
  }
}

// Fields the wire form of old did not carry, each by name (fixed by the one form).
TEST(ReportPipe, InUseBytesCrosses) {
  EXPECT_EQ(through_the_pipe(full_model()).memory.in_use_bytes, 1024u);
}

TEST(ReportPipe, PackAndPackMembersCross) {
  const ModelReport back = through_the_pipe(full_model());
  EXPECT_EQ(back.pack, 2);
  EXPECT_EQ(back.pack_members, 5);
  EXPECT_EQ(back.pack_boundary, "fit.batch_size 64, not 32 (pack 1)");
}

TEST(ReportPipe, SoloAndSlowdownCross) {
  const ModelReport back = through_the_pipe(full_model());
  EXPECT_EQ(back.solo_s, 2.5);
  EXPECT_EQ(back.slowdown, 1.125);
}

TEST(ReportPipe, DeviceAndReleaseBytesCross) {
  const ModelReport back = through_the_pipe(full_model());
  EXPECT_EQ(back.process_device_bytes, 8192u);
  EXPECT_EQ(back.in_use_before_release_bytes, 300u);
  EXPECT_EQ(back.in_use_after_release_bytes, 200u);
}

// The form has one count of rows trained on, "samples"; fit.samples comes back as it, not as
// itself. The worker sets the report's samples from fit.samples (study/model_worker.cpp, finish),
// so in a child's report the two are one number.
TEST(ReportPipe, FitSamplesIsTheReportsSamples) {
  const ModelReport back = through_the_pipe(full_model());  // fit.samples 1280, samples 640
  EXPECT_EQ(back.samples, 640);
  EXPECT_EQ(back.fit.samples, 640);
}

// An epoch too short for the clock has an infinite rate: it crosses as "inf", as every metric does.
TEST(ReportPipe, AnEpochOfNoMeasurableTimeCrossesWithItsInfiniteRate) {
  ModelReport sent;
  sent.fit.epochs.push_back({0.5, NAN, NAN, NAN, 0.0, INFINITY, 0, 0, {}, {}});
  EXPECT_EQ(json(sent)["epochs"][0]["samples_per_s"], "inf");
  const ModelReport back = through_the_pipe(sent);
  ASSERT_EQ(back.fit.epochs.size(), 1u);
  EXPECT_EQ(back.fit.epochs[0].seconds, 0.0);
  EXPECT_EQ(back.fit.epochs[0].samples_per_s, INFINITY);
}

// ---- The options a child is sent ----------------------------------------------------------------

RunOptions full_options() {
  RunOptions o;
  o.models_path = "/x/sweep.json";
  o.data = "synthetic:teacher:rows=70";
  o.backend = {
      BackendKind::host_exec, GemmImpl::cublas, ActivationImpl::cudnn, GraphsChoice::off, 3, 5};
  o.overrides.epochs = 7;
  o.overrides.batch_size = 48;
  o.overrides.learning_rate = 0.25f;
  // the largest: must not pass through a double or an int64
  o.overrides.seed = 18446744073709551615u;
  o.overrides.memory_limit = size_t(3) << 30;
  o.overrides.memory_mode = PoolMode::reserve;
  o.devices = {1, 2, 5};
  o.concurrency = 6;
  o.pack_size = 9;
  o.quiet = true;
  o.verbose = true;
  o.rank_by = RankBy::test_loss;
  o.timeline = true;
  o.calibration_steps = 11;
  o.stall_timeout_s = 2.5;
  o.keep_pools = true;
  o.inject_fault = "m-3";
  o.mps = MpsUse::off;
  o.sm_share = 30;
  o.sm_partitions = 3;
  o.stage_best = [](const ModelReport&, const std::function<void()>&) {
  };  // does not cross: StageBestStaysWithTheKeeper
  SchedulerSpec scheduler;
  scheduler.type = SchedulerKind::successive_halving;
  scheduler.metric = "val_mae";
  scheduler.grace_epochs = 2;
  scheduler.reduction_factor = 5;
  scheduler.max_epochs = 50;
  o.scheduler = scheduler;  // minimized
  return o;
}

RunOptions options_through_the_pipe(const RunOptions& o) {
  return run_options_from_json(json::parse(to_json(o).dump()));  // as the child reads it on stdin
}

// Every field of the options, one by one, against what was sent.
void expect_same_options(const RunOptions& got, const RunOptions& want) {
  EXPECT_EQ(got.models_path, want.models_path);
  EXPECT_EQ(got.data, want.data);
  EXPECT_EQ(got.backend.kind, want.backend.kind);
  EXPECT_EQ(got.backend.gemm, want.backend.gemm);
  EXPECT_EQ(got.backend.activations, want.backend.activations);
  EXPECT_EQ(got.backend.graphs, want.backend.graphs);
  EXPECT_EQ(got.backend.device, want.backend.device);
  EXPECT_EQ(got.backend.threads, want.backend.threads);
  EXPECT_EQ(got.overrides.epochs, want.overrides.epochs);
  EXPECT_EQ(got.overrides.batch_size, want.overrides.batch_size);
  EXPECT_EQ(got.overrides.learning_rate, want.overrides.learning_rate);
  EXPECT_EQ(got.overrides.seed, want.overrides.seed);
  EXPECT_EQ(got.overrides.memory_limit, want.overrides.memory_limit);
  EXPECT_EQ(got.overrides.memory_mode, want.overrides.memory_mode);
  EXPECT_EQ(got.devices, want.devices);
  EXPECT_EQ(got.concurrency, want.concurrency);
  EXPECT_EQ(got.pack_size, want.pack_size);
  EXPECT_EQ(got.quiet, want.quiet);
  EXPECT_EQ(got.verbose, want.verbose);
  EXPECT_EQ(got.rank_by, want.rank_by);
  EXPECT_EQ(got.timeline, want.timeline);
  EXPECT_EQ(got.calibration_steps, want.calibration_steps);
  EXPECT_EQ(got.stall_timeout_s, want.stall_timeout_s);
  EXPECT_EQ(got.keep_pools, want.keep_pools);
  EXPECT_EQ(got.inject_fault, want.inject_fault);
  EXPECT_EQ(got.mps, want.mps);
  EXPECT_EQ(got.sm_share, want.sm_share);
  EXPECT_EQ(got.sm_partitions, want.sm_partitions);
  ASSERT_EQ(got.scheduler.has_value(), want.scheduler.has_value());
  if (want.scheduler) {
    EXPECT_EQ(got.scheduler->type, want.scheduler->type);
    EXPECT_EQ(got.scheduler->metric, want.scheduler->metric);
    EXPECT_EQ(got.scheduler->maximize, want.scheduler->maximize);
    EXPECT_EQ(got.scheduler->grace_epochs, want.scheduler->grace_epochs);
    EXPECT_EQ(got.scheduler->reduction_factor, want.scheduler->reduction_factor);
    EXPECT_EQ(got.scheduler->max_epochs, want.scheduler->max_epochs);
  }
}

TEST(ChildOptions, EveryFieldArrivesAsSent) {
  const RunOptions sent = full_options();
  expect_same_options(options_through_the_pipe(sent), sent);
}

// The message itself, with its enums by name.
TEST(ChildOptions, TheFormAsWritten) {
  expect_json(to_json(full_options()), R"({
    "models_path": "/x/sweep.json",
    "data": "synthetic:teacher:rows=70",
    "backend": {"kind": "host-exec", "gemm": "cublas", "activations": "cudnn", "graphs": "off", "device": 3, "threads": 5},
    "overrides": {"epochs": 7, "batch_size": 48, "learning_rate": 0.25, "seed": 18446744073709551615,
                  "memory_limit": 3221225472, "memory_mode": "reserve"},
    "devices": [1, 2, 5],
    "concurrency": 6,
    "pack_size": 9,
    "quiet": true,
    "verbose": true,
    "rank_by": "test_loss",
    "timeline": true,
    "calibration_steps": 11,
    "stall_timeout_s": 2.5,
    "keep_pools": true,
    "inject_fault": "m-3",
    "scheduler": {"type": "successive_halving", "metric": "val_mae", "mode": "min", "grace_epochs": 2,
                  "reduction_factor": 5, "max_epochs": 50},
    "mps": "off", "sm_share": 30, "sm_partitions": 3})");
}

// The defaults arrive as defaults: unset overrides stay unset, the grow mode stays grow.
TEST(ChildOptions, DefaultsArriveAsDefaults) {
  RunOptions sent;
  sent.overrides.memory_mode = PoolMode::grow;
  const RunOptions back = options_through_the_pipe(sent);
  expect_same_options(back, sent);
  EXPECT_FALSE(back.overrides.epochs.has_value());
  EXPECT_FALSE(back.overrides.batch_size.has_value());
  EXPECT_FALSE(back.overrides.learning_rate.has_value());
  EXPECT_FALSE(back.overrides.seed.has_value());
  EXPECT_FALSE(back.overrides.memory_limit.has_value());
  EXPECT_EQ(back.overrides.memory_mode, PoolMode::grow);
  EXPECT_FALSE(back.concurrency.has_value());      // the machine's bound, not 0 (all at once)
  EXPECT_FALSE(back.stall_timeout_s.has_value());  // the derived timeout, not 0 (never)
  EXPECT_FALSE(options_through_the_pipe(RunOptions{}).overrides.memory_mode.has_value());
  expect_same_options(options_through_the_pipe(RunOptions{}), RunOptions{});
}

// The keeper's question is a function of the parent's process: a child has none, and stages every
// model that ends ok (study/model_worker.cpp); the parent's keeper drops what it need not keep.
TEST(ChildOptions, StageBestStaysWithTheKeeper) {
  EXPECT_FALSE(options_through_the_pipe(full_options()).stage_best);
}

// So are an in-process caller's hooks: a judge (the Python package's Optuna pruner), which a run
// with a child refuses (apps/multifit/run_setup.cpp), and the status sink, which the parent's
// progress calls as each child's model ends.
TEST(ChildOptions, AnInProcessCallersHooksStayInItsProcess) {
  RunOptions options = full_options();
  RungTable judge(*options.scheduler, {0, 1});
  options.judge = &judge;
  options.status = [](size_t, size_t, const std::string&, const std::string&) {};
  const RunOptions back = options_through_the_pipe(options);
  EXPECT_EQ(back.judge, nullptr);
  EXPECT_FALSE(back.status);
}

// The defects of old, each by name: both now cross (the options' one form writes every field).
TEST(ChildOptions, PackSizeArrives) {
  EXPECT_EQ(options_through_the_pipe(full_options()).pack_size, 9);
}

// A processes-mode child sees its GPU as device 0 (CUDA_VISIBLE_DEVICES,
// study/modes/processes/child.cpp), which picks the device it uses; the options it is sent still
// carry the parent's backend.device.
TEST(ChildOptions, BackendDeviceArrives) {
  EXPECT_EQ(options_through_the_pipe(full_options()).backend.device, 3);
}

// ---- The job a child is sent --------------------------------------------------------------------

// Two specs between them setting every field of a spec to a value not its default: adam has betas
// and epsilon, sgd momentum (each form writes only its optimizer's own).
ModelSpec adam_spec() {
  ModelSpec s;
  s.name = "j-5";
  s.data = "synthetic:multilabel";
  s.input = 6;
  LayerSpec dense{16, Activation::tanh};
  dense.kernel_initializer = {InitializerKind::he_normal};
  dense.bias_initializer = {InitializerKind::constant, 0.25};
  dense.kernel_regularizer = {0.f, 1e-4f}, dense.activity_regularizer = {1e-5f, 0.f};
  LayerSpec dropout, norm, no_bias{8, Activation::relu};
  dropout.kind = LayerKind::dropout, dropout.rate = 0.25;
  norm.kind = LayerKind::batch_normalization, norm.momentum = 0.9, norm.epsilon = 1e-2,
  norm.center = false;
  no_bias.use_bias = false;
  s.layers = {dense, dropout, norm, no_bias, {2, Activation::sigmoid}};
  s.loss = Loss::binary_crossentropy;
  s.loss.label_smoothing = 0.125;
  s.metrics = std::vector<MetricSpec>{{"acc", Metric::binary_accuracy},
                                      {"mae", Metric::mean_absolute_error}};
  s.targets = 2;
  s.optimizer.kind = OptimizerKind::adam;
  s.optimizer.learning_rate = 0.1f;  // not exact in binary: the float must cross as itself
  s.optimizer.beta_1 = 0.75;
  s.optimizer.beta_2 = 0.875;
  s.optimizer.epsilon = 1e-5f;
  s.optimizer.amsgrad = true;
  s.optimizer.weight_decay = 0.0625f;
  s.optimizer.clip = ClipKind::global_norm, s.optimizer.clip_value = 1.5f;
  ScheduleSpec schedule;
  schedule.kind = ScheduleKind::cosine_decay, schedule.initial_learning_rate = 0.1,
  schedule.decay_steps = 1000;
  schedule.alpha = 0.125, schedule.warmup_target = 0.25, schedule.warmup_steps = 10;
  s.optimizer.schedule = schedule;
  s.fit = {4, 24, 0.25, false};
  s.fit.class_weight = {{0, 0.5f}, {2, 1.5f}};
  EarlyStoppingSpec early;
  early.monitor = "val_mae", early.patience = 3, early.min_delta = 0.001,
  early.mode = MonitorMode::min;
  early.baseline = 0.5, early.restore_best_weights = true, early.start_from_epoch = 1;
  s.fit.early_stopping = early;
  s.seed = 18446744073709551615u;
  s.memory = {size_t(5) << 20, PoolMode::reserve};
  s.input_shape = ImageShape{1, 3, 2};
  s.preprocessing = Preprocessing::parse(json::parse(R"([{"type": "RandomFlip", "mode": "vertical"},
                                                         {"type": "GaussianNoise", "stddev": 0.3}])"),
                                         s.input_shape, s.input, "spec.json");
  s.pipeline = {3, 5};
  s.device_share = {16, 40};
  return s;
}

ModelSpec sgd_spec() {
  ModelSpec s = adam_spec();
  s.layers = {{12, Activation::linear}, {3, Activation::softmax}};
  s.targets = 1;
  s.loss = Loss::sparse_categorical_crossentropy;
  s.loss.from_logits = true;
  s.layers.back().activation = Activation::linear;
  s.metrics.reset();
  s.optimizer = {};
  s.optimizer.kind = OptimizerKind::sgd;
  s.optimizer.learning_rate = 0.03f;
  s.optimizer.momentum = 0.5f;
  s.optimizer.nesterov = true;
  s.fit.early_stopping.reset();
  s.fit.class_weight.clear(), s.fit.sample_weight = true;
  ReduceLROnPlateauSpec reduce;
  reduce.monitor = "loss", reduce.factor = 0.5, reduce.patience = 2, reduce.cooldown = 1,
  reduce.min_lr = 1e-5;
  s.fit.reduce_lr_on_plateau = reduce;
  return s;
}

Job full_job(const ModelSpec& spec) {
  Job j;
  j.index = 4;
  j.name = "j-5 of the sweep";
  j.spec = spec;
  j.data = "synthetic:teacher:rows=70";
  j.device = 3;
  j.load = "/x/in.weights";
  j.save = "/x/out.weights";
  j.keep = "/x/best/.staging/j-5.weights";
  j.values = {{"dropout", 0.25}};
  return j;
}

Job job_through_the_pipe(const Job& job) { return job_from_json(json::parse(to_json(job).dump())); }

void expect_same_spec(const ModelSpec& got, const ModelSpec& want) {
  EXPECT_EQ(to_json(got).dump(), to_json(want).dump());
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.data, want.data);
  EXPECT_EQ(got.input, want.input);
  ASSERT_EQ(got.layers.size(), want.layers.size());
  for (size_t i = 0; i < want.layers.size(); ++i)
    EXPECT_TRUE(got.layers[i] == want.layers[i]) << "layers[" << i << "]";
  EXPECT_EQ(got.loss, want.loss);
  EXPECT_EQ(got.metrics, want.metrics);
  EXPECT_TRUE(got.optimizer == want.optimizer);
  EXPECT_TRUE(got.fit == want.fit);
  EXPECT_EQ(got.seed, want.seed);
  EXPECT_EQ(got.memory.limit_bytes, want.memory.limit_bytes);
  EXPECT_EQ(got.memory.mode, want.memory.mode);
  EXPECT_EQ(got.targets, want.targets);
  EXPECT_EQ(got.input_shape, want.input_shape);
  EXPECT_TRUE(got.preprocessing == want.preprocessing) << got.preprocessing.describe();
  EXPECT_EQ(got.pipeline, want.pipeline);
  EXPECT_EQ(got.device_share, want.device_share);
}

// Every field of a good job, its spec included, one by one. Its error is not sent: a bad job is
// never given to a child (to_json takes a job with a spec).
TEST(ChildJob, EveryFieldArrivesAsSent) {
  for (const ModelSpec& spec : {adam_spec(), sgd_spec()}) {
    SCOPED_TRACE(to_string(spec.optimizer.kind));
    const Job sent = full_job(spec);
    const Job back = job_through_the_pipe(sent);
    EXPECT_EQ(back.index, sent.index);
    EXPECT_EQ(back.name, sent.name);
    ASSERT_TRUE(back.spec.has_value());
    expect_same_spec(*back.spec, *sent.spec);
    EXPECT_EQ(back.error, "");
    EXPECT_EQ(back.data, sent.data);
    EXPECT_EQ(back.device, sent.device);
    EXPECT_EQ(back.load, sent.load);
    EXPECT_EQ(back.save, sent.save);
    EXPECT_EQ(back.keep, sent.keep);
    EXPECT_EQ(back.values, sent.values);
  }
}

// A job with what the run's overrides made of its spec: the child trains that, not the spec's file.
TEST(ChildJob, TheSpecArrivesWithTheOverridesApplied) {
  Job sent = full_job(with_overrides(adam_spec(), full_options().overrides));
  const Job back = job_through_the_pipe(sent);
  ASSERT_TRUE(back.spec.has_value());
  expect_same_spec(*back.spec, *sent.spec);
  EXPECT_EQ(back.spec->fit.epochs, 7);
  EXPECT_EQ(back.spec->fit.batch_size, 48);
  EXPECT_EQ(back.spec->optimizer.learning_rate, 0.25f);
  EXPECT_EQ(back.spec->memory.limit_bytes, size_t(3) << 30);
}

// The defaults arrive as defaults: no load, no save, nothing kept, device 0.
TEST(ChildJob, DefaultsArriveAsDefaults) {
  Job sent;
  sent.spec = sgd_spec();
  const Job back = job_through_the_pipe(sent);
  EXPECT_EQ(back.index, 0u);
  EXPECT_EQ(back.name, "");
  EXPECT_EQ(back.device, 0);
  EXPECT_EQ(back.data, "");
  EXPECT_EQ(back.load, "");
  EXPECT_EQ(back.save, "");
  EXPECT_EQ(back.keep, "");
  ASSERT_TRUE(back.spec.has_value());
  expect_same_spec(*back.spec, *sent.spec);
}

}  // namespace
}  // namespace mf
