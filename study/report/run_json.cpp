// The one JSON form of a run's report (RunReport, report.h) and of the structs only a run has (its
// machine, its scheduler's rungs), both ways; its GPU summaries; and the result document of runs.
#include <algorithm>
#include <cmath>

#include "runtime/json_forms.h"
#include "runtime/nvml_monitor.h"
#include "runtime/output_file.h"
#include "study/report/answer.h"
#include "study/report/json_fields.h"
#include "study/report/repeats.h"
#include "study/report/report.h"

namespace mf {

using nlohmann::json;
using namespace report_json;

void to_json(json& j, const MachineRecord& m) {
  j = {{"multifit", m.multifit},
       {"cores", m.cores},
       {"hardware_threads", m.hardware_threads},
       {"memory_total_bytes", m.memory_total_bytes},
       {"load_average_before", m.load_average_before},
       {"load_average_after", m.load_average_after},
       {"others_busy_cores", metric_json(m.others_busy_cores)},
       {"cpu_pressure", metric_json(m.cpu_pressure)},
       {"busy", text(m.busy)},
       {"quiet_samples_per_s", metric_json(m.quiet_samples_per_s)},
       {"quiet_from", text(m.quiet_from)}};
}
void from_json(const json& j, MachineRecord& m) {
  m.multifit = j.at("multifit");
  m.cores = j.at("cores");
  m.hardware_threads = j.at("hardware_threads");
  m.memory_total_bytes = j.at("memory_total_bytes");
  m.load_average_before = j.at("load_average_before");
  m.load_average_after = j.at("load_average_after");
  m.others_busy_cores = optional_metric_from(j.at("others_busy_cores"));
  m.cpu_pressure = optional_metric_from(j.at("cpu_pressure"));
  m.busy = text_from(j.at("busy"));
  // Absent from documents before them.
  m.quiet_samples_per_s = optional_metric_from(j.value("quiet_samples_per_s", json()));
  m.quiet_from = text_from(j.value("quiet_from", json()));
}

void to_json(json& j, const Arrangement& a) {
  j = {{"cores", a.cores}, {"at_once", a.at_once}, {"threads_each", a.threads_each}};
}
void from_json(const json& j, Arrangement& a) {
  a.cores = j.at("cores");
  a.at_once = j.at("at_once");
  a.threads_each = j.at("threads_each");
}

void to_json(json& j, const RungSummary& r) {
  j = {{"bracket", r.bracket},         {"epochs", r.epochs},
       {"trials", r.trials},           {"kept", r.kept},
       {"best", metric_json(r.best)},  {"median", metric_json(r.median)},
       {"worst", metric_json(r.worst)}};
}
void from_json(const json& j, RungSummary& r) {
  r = {j.at("bracket"),
       j.at("epochs"),
       j.at("trials"),
       j.at("kept"),
       metric_from(j.at("best")),
       metric_from(j.at("median")),
       metric_from(j.at("worst"))};
}

// compute_fraction is the samples over the full sweep's: written for a reader, not read back.
void to_json(json& j, const SchedulerReport& s) {
  j = {{"spec", s.spec},
       {"rungs", s.rungs},
       {"samples", s.samples},
       {"full_samples", s.full_samples},
       {"compute_fraction",
        s.full_samples > 0 ? json(double(s.samples) / double(s.full_samples)) : json()}};
}
void from_json(const json& j, SchedulerReport& s) {
  s = {j.at("spec").get<SchedulerSpec>(), j.at("rungs").get<std::vector<RungSummary>>(),
       j.at("samples"), j.at("full_samples")};
}

namespace {

// The overlap of the models' step timelines, with what it measures: {"fraction", "busy_s",
// "concurrent_s", "kind"}; null when it was not measured. The fraction is the other two's: written
// for a reader, not read back.
json overlap_json(const RunReport& run) {
  if (!run.overlap) return json();
  return {{"fraction", run.overlap->fraction()},
          {"busy_s", run.overlap->busy_s},
          {"concurrent_s", run.overlap->concurrent_s},
          {"kind", text(run.overlap_kind)}};
}
void overlap_from(const json& j, RunReport& run) {
  if (j.is_null()) return;
  run.overlap = Overlap{j.at("busy_s"), j.at("concurrent_s")};
  run.overlap_kind = text_from(j.at("kind"));
}

// Each model in its one form but for its step timeline, which goes to --trace.
json models_json(const std::vector<ModelReport>& models) {
  json out = json::array();
  for (const ModelReport& m : models) {
    json model = m;
    model.erase("timeline");
    out.push_back(std::move(model));
  }
  return out;
}

}  // namespace

// `unjudged` is why_unjudged's of the other fields: written for a reader, not read back.
void to_json(json& j, const RunReport& run) {
  j = {{"backend", text(run.backend)},
       {"device_name", text(run.device_name)},
       {"device_schedule", text(run.device_schedule)},
       {"mps", run.mps},
       {"mps_daemon", run.mps_daemon},
       {"sm_partitions", run.sm_partitions},
       {"mode", run.mode},
       {"repeat", run.repeat},
       {"concurrency", run.concurrency},
       {"concurrency_reason", text(run.concurrency_reason)},
       {"training_threads", run.training_threads},
       {"arrangement", run.arrangement},
       {"pools_kept", run.pools_kept},
       {"injected_fault", text(run.injected_fault)},
       {"resumed_models", run.resumed_models},
       {"data", {{"source", text(run.data)}, {"bytes", run.data_bytes}}},
       {"host_peak_rss_bytes", run.host_peak_rss_bytes},
       {"workers_peak_rss_bytes", run.workers_peak_rss_bytes},
       {"process_startup_s", metric_json(run.process_startup_s)},
       {"startup_s", metric_json(run.startup_s)},
       {"train_s", metric_json(run.train_s)},
       {"wall_s", run.wall_s},
       {"samples_per_s", metric_json(run.samples_per_s)},
       {"speedup_vs_serial", metric_json(run.speedup_vs_serial)},
       {"serial_wall_s", metric_json(run.serial_wall_s)},
       {"overlap", overlap_json(run)},
       {"gpu", run.gpu},
       {"gpu_note", text(run.gpu_note)},
       {"error", text(run.error)},
       {"auto", run.auto_choice},
       {"rank_by", text(run.rank_by)},
       {"ranking", run.ranking},
       {"scheduler", run.scheduler},
       {"ranks", run.ranks},
       {"sweep", run.sweep},
       {"shard", run.shard},
       {"shards", run.shards},
       {"machine", run.machine},
       {"unjudged", text(why_unjudged(run))},
       {"models", models_json(run.models)}};
}

void from_json(const json& j, RunReport& run) {
  run = RunReport{};
  run.backend = text_from(j.at("backend"));
  run.device_name = text_from(j.at("device_name"));
  // absent from documents before it
  run.device_schedule = text_from(j.value("device_schedule", json()));
  j.at("mps").get_to(run.mps);
  j.value("mps_daemon", json()).get_to(run.mps_daemon);  // absent from documents before them
  j.value("sm_partitions", json()).get_to(run.sm_partitions);
  run.mode = j.at("mode");
  run.repeat = j.value("repeat", 1);  // absent from documents before it
  run.concurrency = j.at("concurrency");
  run.concurrency_reason = text_from(j.at("concurrency_reason"));
  j.at("training_threads").get_to(run.training_threads);
  j.value("arrangement", json()).get_to(run.arrangement);  // absent from documents before it
  run.pools_kept = j.value("pools_kept", false);           // absent from documents before it
  // absent from documents before it
  run.injected_fault = text_from(j.value("injected_fault", json()));
  run.resumed_models = j.at("resumed_models");
  run.data = text_from(j.at("data").at("source"));
  run.data_bytes = j.at("data").at("bytes");
  run.host_peak_rss_bytes = j.at("host_peak_rss_bytes");
  j.at("workers_peak_rss_bytes").get_to(run.workers_peak_rss_bytes);
  run.process_startup_s = optional_metric_from(j.at("process_startup_s"));
  run.startup_s = optional_metric_from(j.at("startup_s"));
  run.train_s = optional_metric_from(j.at("train_s"));
  run.wall_s = j.at("wall_s");
  run.samples_per_s = optional_metric_from(j.at("samples_per_s"));
  run.speedup_vs_serial = optional_metric_from(j.at("speedup_vs_serial"));
  run.serial_wall_s = optional_metric_from(j.at("serial_wall_s"));
  overlap_from(j.at("overlap"), run);
  run.gpu = j.at("gpu");
  run.gpu_note = text_from(j.at("gpu_note"));
  run.error = text_from(j.at("error"));
  run.auto_choice = j.at("auto");
  run.rank_by = text_from(j.at("rank_by"));
  j.at("ranking").get_to(run.ranking);
  j.value("scheduler", json()).get_to(run.scheduler);  // absent from documents before it
  j.at("ranks").get_to(run.ranks);
  j.at("sweep").get_to(run.sweep);
  j.at("shard").get_to(run.shard);
  j.at("shards").get_to(run.shards);
  j.value("machine", json()).get_to(run.machine);  // absent from documents before it
  j.at("models").get_to(run.models);
}

void report_gpus(RunReport& run, const std::vector<GpuSummary>& gpus) {
  const auto figures = [](const GpuSummary& gpu) -> json {
    return {{"device", gpu.device},
            {"samples", gpu.samples},
            {"mean_utilization_percent", gpu.mean_utilization_percent},
            {"max_utilization_percent", gpu.max_utilization_percent},
            {"peak_used_bytes", gpu.peak_used_bytes},
            {"total_bytes", gpu.total_bytes}};
  };
  run.gpu = json();
  run.gpu_note = gpu_notes(gpus);
  if (std::none_of(gpus.begin(), gpus.end(),
                   [](const GpuSummary& gpu) { return gpu.why_not.empty(); })) {
    if (run.gpu_note.empty()) run.gpu_note = "no GPU sampled";
  } else if (gpus.size() == 1) {
    run.gpu = figures(gpus[0]);
  } else {
    run.gpu = json::array();
    for (const GpuSummary& gpu : gpus) {
      json entry = {{"cuda_device", gpu.cuda_device}, {"pci_bus_id", text(gpu.pci_bus_id)}};
      if (gpu.why_not.empty()) {
        entry.update(figures(gpu));
        entry["note"] = text(gpu_note(gpu));
      } else {  // never sampled: no figures
        for (const char* field : {"device", "mean_utilization_percent", "max_utilization_percent",
                                  "peak_used_bytes", "total_bytes"})
          entry[field] = nullptr;
        entry["samples"] = 0;
        entry["note"] = gpu.why_not;
      }
      run.gpu.push_back(std::move(entry));
    }
  }
  for (ModelReport& m : run.models) {
    for (const GpuSummary& gpu : gpus)
      if (const auto p = gpu.process_peak_bytes.find(m.pid); p != gpu.process_peak_bytes.end())
        m.process_device_bytes = m.process_device_bytes.value_or(0) + p->second;
  }
}

void write_json(const std::vector<RunReport>& runs, const std::string& path) {
  json doc;
  if (runs.size() == 1) {
    doc = runs[0];
  } else {
    const bool one_mode = std::all_of(runs.begin(), runs.end(),
                                      [&](const RunReport& r) { return r.mode == runs[0].mode; });
    const int repeats =
        std::max_element(runs.begin(), runs.end(), [](const RunReport& a, const RunReport& b) {
          return a.repeat < b.repeat;
        })->repeat;
    doc = {{"mode", one_mode ? runs[0].mode : "all"}, {"runs", json::array()}};
    for (const RunReport& run : runs) doc["runs"].push_back(run);
    if (repeats > 1) doc["repeat"] = repeats, doc["repeats"] = spread_by_mode(runs);
    if (const std::string answer = modes_answer(runs); !answer.empty()) doc["answer"] = answer;
  }
  write_output_file(path, "the result file", doc.dump(2) + '\n');
}

}  // namespace mf
