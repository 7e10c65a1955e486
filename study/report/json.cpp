// The one JSON form of each report struct (report.h), and the result document made of them.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "runtime/json_forms.h"
#include "runtime/nvml_monitor.h"
#include "runtime/output_file.h"
#include "study/report/answer.h"
#include "study/report/repeats.h"
#include "study/report/report.h"

namespace mf {

MF_JSON_BY_NAME(ModelStatus, kModelStatusNames)
MF_JSON_BY_NAME(FitStatus, kFitStatusNames)
MF_JSON_BY_NAME(OptimizerKind, kOptimizerNames)
MF_JSON_BY_NAME(PoolMode, kPoolModeNames)
MF_JSON_BY_NAME(Activation, kActivationNames)
// With defaults: a journal or document written before a field was added (hidden, activations) reads back.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TrainingSettings, optimizer, learning_rate, epochs, batch_size, validation_split,
                                   shuffle, seed, memory_mode, graphs, threads, hidden, activations, layers,
                                   schedule, pipeline_workers, prefetch)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PlanPart, name, bytes)
MF_JSON_BY_NAME(Metric, kMetricNames)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MetricSpec, name, kind)

namespace {

using nlohmann::json;

json metric(double v, bool present = true) { return metric_json(v, present); }
json metric(const std::optional<double>& v) { return metric_json(v); }
// metric() read back: NAN for null.
double metric_from(const json& j) {
  if (j.is_null()) return NAN;
  if (j.is_string()) return j == "nan" ? NAN : j == "inf" ? INFINITY : -INFINITY;
  return j.get<double>();
}
std::optional<double> optional_metric_from(const json& j) {
  return j.is_null() ? std::nullopt : std::optional<double>(metric_from(j));
}
json text(const std::string& s) { return s.empty() ? json() : json(s); }  // null: not reached
std::string text_from(const json& j) { return j.is_null() ? "" : j.get<std::string>(); }

json intervals(const Track& track) {
  json out = json::array();
  for (const Interval& i : track) out.push_back({i.begin_s, i.end_s});
  return out;
}
Track track_from(const json& j) {
  Track track;
  for (const json& i : j) track.push_back({i.at(0).get<double>(), i.at(1).get<double>()});
  return track;
}

}  // namespace

json metric_json(double v, bool present) {
  if (!present) return json();
  if (std::isfinite(v)) return v;
  return std::isinf(v) ? json(v > 0 ? "inf" : "-inf") : json("nan");
}
json metric_json(const std::optional<double>& v) { return v ? metric_json(*v) : json(); }

double epochs_sum(const ModelReport& m, double EpochMetrics::*seconds) {
  double sum = 0;
  for (const EpochMetrics& e : m.fit.epochs) sum += e.*seconds;
  return sum;
}

std::optional<double> input_wait_fraction(const ModelReport& m) {
  const double seconds = epochs_sum(m, &EpochMetrics::seconds);
  if (!m.settings || !m.settings->pipeline_workers || seconds <= 0) return std::nullopt;
  return epochs_sum(m, &EpochMetrics::input_wait_s) / seconds;
}

void to_json(json& j, const SweepIdentity& s) {
  j = {{"name", s.name}, {"models", s.models}, {"fingerprint", s.fingerprint}};
}
void from_json(const json& j, SweepIdentity& s) {
  s = {j.at("name"), j.at("models"), j.at("fingerprint")};
}
void to_json(json& j, const Shard& s) { j = {{"index", s.index}, {"count", s.count}}; }
void from_json(const json& j, Shard& s) {
  s = {j.at("index"), j.at("count")};
  if (s.count < 1 || s.index >= s.count) throw std::invalid_argument("shard " + to_string(s) + ": expected I/N with 0 <= I < N");
}

void to_json(json& j, const RunPart& p) {
  j = {{"index", p.index}, {"host", p.host}, {"wall_s", p.wall_s}, {"startup_s", p.startup_s},
       {"samples_per_s", p.samples_per_s}, {"models", p.models}};
}
void from_json(const json& j, RunPart& p) {
  p.index = j.at("index");
  p.host = j.at("host");
  j.at("wall_s").get_to(p.wall_s);
  j.at("startup_s").get_to(p.startup_s);
  j.at("samples_per_s").get_to(p.samples_per_s);
  p.models = j.at("models");
}

namespace {

// A model's metrics by name ({"accuracy": 0.91, "mae": 0.12}): each of `names` with its value in
// `values` (none where there are none: no validation rows, no test set).
json named_metrics(const std::vector<MetricSpec>& metrics, const std::vector<double>& values) {
  json out = json::object();
  for (size_t k = 0; k < metrics.size() && k < values.size(); ++k) out[metrics[k].name] = metric(values[k]);
  return out;
}
std::vector<double> named_metrics_from(const std::vector<MetricSpec>& metrics, const json& j) {
  std::vector<double> values;
  for (const MetricSpec& m : metrics)
    if (j.contains(m.name)) values.push_back(metric_from(j.at(m.name)));
  return values;
}

}  // namespace

// A model's verdicts at its rungs: [{"epochs", "value" (null: it had none), "kept"}].
static json rungs_json(const std::vector<RungResult>& rungs) {
  json out = json::array();
  for (const RungResult& r : rungs) out.push_back({{"epochs", r.epochs}, {"value", metric(r.value)}, {"kept", r.kept}});
  return out;
}

void to_json(json& j, const ModelReport& m) {
  json epochs = json::array();
  for (const EpochMetrics& e : m.fit.epochs)
    epochs.push_back({{"loss", metric(e.loss)},
                      {"accuracy", metric(e.accuracy, m.has_accuracy)},
                      {"val_loss", metric(e.val_loss, m.validated)},
                      {"val_accuracy", metric(e.val_accuracy, m.validated && m.has_accuracy)},
                      {"metrics", named_metrics(m.metrics, e.metrics)},
                      {"val_metrics", named_metrics(m.metrics, e.val_metrics)},
                      {"learning_rate", std::isnan(e.learning_rate) ? json() : json(e.learning_rate)},
                      {"seconds", metric(e.seconds)},
                      {"samples_per_s", metric(e.samples_per_s)},
                      {"input_wait_s", e.input_wait_s},
                      {"input_busy_s", e.input_busy_s}});
  j = {{"index", m.index},
       {"name", m.name},
       {"values", m.values},
       {"settings", m.settings},
       {"status", m.status},
       {"error", text(m.error)},
       {"backend", text(m.backend)},
       {"device", m.device},
       {"device_name", text(m.device_name)},
       {"device_schedule", text(m.device_schedule)},
       {"cuda_visible_devices", text(m.visible_devices)},
       {"host", text(m.host)},
       {"pid", m.pid},
       {"mpi_rank", m.mpi_rank},
       {"pack", m.pack},
       {"pack_members", m.pack_members},
       {"data", {{"source", text(m.data)}, {"bytes", m.data_bytes}}},
       {"startup_s", metric(m.startup_s)},
       // null when fit did not run; a worker that died in training keeps the rungs its parent heard
       {"fit", m.fitted || !m.fit.rungs.empty() ? json{{"status", m.fit.status},
                               {"why", text(m.fit.why)},
                               {"stopped_epoch", m.fit.stopped_epoch},
                               {"stop_reason", text(m.fit.stop_reason)},
                               {"restored_epoch", m.fit.restored_epoch},
                               {"rungs", rungs_json(m.fit.rungs)}}
                        : json()},  // null: not fitted
       {"epochs", epochs},
       {"train_rows", m.train_rows},
       {"samples", m.samples},
       {"train_s", m.fitted ? json(m.fit.train_s) : json()},
       {"samples_per_s", metric(m.samples_per_s)},
       {"solo_s", metric(m.solo_s)},
       {"slowdown", metric(m.slowdown)},
       {"metrics", {{"accuracy", m.has_accuracy}, {"validation", m.validated}, {"test", m.tested}, {"list", m.metrics}}},
       {"test_loss", metric(m.test.loss, m.tested)},
       {"test_accuracy", metric(m.test.accuracy, m.tested && m.has_accuracy)},
       {"test_metrics", named_metrics(m.metrics, m.test.metrics)},
       {"params", m.params},
       {"memory",
        {{"cap_bytes", m.memory.cap_bytes},
         {"reserved_bytes", m.memory.reserved_bytes},
         {"in_use_bytes", m.memory.in_use_bytes},
         {"peak_bytes", m.memory.peak_bytes},
         {"process_device_bytes", m.process_device_bytes},
         {"process_peak_rss_bytes", m.process_peak_rss_bytes},
         {"in_use_before_release_bytes", m.in_use_before_release_bytes},
         {"in_use_after_release_bytes", m.in_use_after_release_bytes},
         {"plan", m.plan}}},
       {"timeline",
        {{"steps", intervals(m.fit.steps)}, {"epochs", intervals(m.fit.epoch_spans)}, {"input", intervals(m.fit.input_spans)}}}};
}

void from_json(const json& j, ModelReport& m) {
  m = ModelReport{};
  m.index = j.at("index");
  m.name = j.at("name");
  m.values = j.value("values", json::object());  // absent from documents before it
  j.at("settings").get_to(m.settings);
  m.status = j.at("status");
  m.error = text_from(j.at("error"));
  m.backend = text_from(j.at("backend"));
  m.device = j.at("device");
  m.device_name = text_from(j.at("device_name"));
  m.device_schedule = text_from(j.value("device_schedule", json()));  // absent from documents before it
  m.visible_devices = text_from(j.at("cuda_visible_devices"));
  m.host = text_from(j.at("host"));
  m.pid = j.at("pid");
  j.at("mpi_rank").get_to(m.mpi_rank);
  j.at("pack").get_to(m.pack);
  j.at("pack_members").get_to(m.pack_members);
  m.data = text_from(j.at("data").at("source"));
  m.data_bytes = j.at("data").at("bytes");
  m.startup_s = optional_metric_from(j.at("startup_s"));
  const json& metrics = j.at("metrics");
  m.metrics = metrics.value("list", std::vector<MetricSpec>());  // absent from documents before it
  if (const json& fit = j.at("fit"); !fit.is_null()) {
    m.fit.status = fit.at("status");
    m.fit.why = text_from(fit.at("why"));
    fit.value("stopped_epoch", json()).get_to(m.fit.stopped_epoch);
    m.fit.stop_reason = text_from(fit.value("stop_reason", json()));
    fit.value("restored_epoch", json()).get_to(m.fit.restored_epoch);
    for (const json& rung : fit.value("rungs", json::array()))  // absent from documents before it
      m.fit.rungs.push_back({rung.at("epochs"), metric_from(rung.at("value")), rung.at("kept")});
  }
  for (const json& e : j.at("epochs")) {
    EpochMetrics epoch;
    epoch.loss = metric_from(e.at("loss")), epoch.accuracy = metric_from(e.at("accuracy"));
    epoch.val_loss = metric_from(e.at("val_loss")), epoch.val_accuracy = metric_from(e.at("val_accuracy"));
    epoch.metrics = named_metrics_from(m.metrics, e.value("metrics", json::object()));
    epoch.val_metrics = named_metrics_from(m.metrics, e.value("val_metrics", json::object()));
    if (const json rate = e.value("learning_rate", json()); !rate.is_null()) epoch.learning_rate = rate;
    epoch.seconds = metric_from(e.at("seconds")), epoch.samples_per_s = metric_from(e.at("samples_per_s"));
    epoch.input_wait_s = e.at("input_wait_s"), epoch.input_busy_s = e.at("input_busy_s");
    m.fit.epochs.push_back(epoch);
  }
  m.train_rows = j.at("train_rows");
  m.samples = j.at("samples");
  m.fitted = !j.at("train_s").is_null();
  if (m.fitted) m.fit.train_s = j.at("train_s");
  m.fit.samples = m.samples;
  m.samples_per_s = optional_metric_from(j.at("samples_per_s"));
  m.solo_s = optional_metric_from(j.at("solo_s"));
  m.slowdown = optional_metric_from(j.at("slowdown"));
  m.has_accuracy = metrics.at("accuracy");
  m.validated = metrics.at("validation");
  m.tested = metrics.at("test");
  m.test = {metric_from(j.at("test_loss")), metric_from(j.at("test_accuracy")),
            named_metrics_from(m.metrics, j.value("test_metrics", json::object()))};
  m.params = j.at("params");
  const json& memory = j.at("memory");
  m.memory = {memory.at("cap_bytes"), memory.at("reserved_bytes"), memory.at("in_use_bytes"), memory.at("peak_bytes")};
  memory.at("process_device_bytes").get_to(m.process_device_bytes);
  memory.at("process_peak_rss_bytes").get_to(m.process_peak_rss_bytes);
  memory.at("in_use_before_release_bytes").get_to(m.in_use_before_release_bytes);
  memory.at("in_use_after_release_bytes").get_to(m.in_use_after_release_bytes);
  memory.at("plan").get_to(m.plan);
  m.fit.steps = track_from(j.at("timeline").at("steps"));
  m.fit.epoch_spans = track_from(j.at("timeline").at("epochs"));
  // A journal written before the input track, or by a part that had no timeline, has none.
  if (const json& timeline = j.at("timeline"); timeline.contains("input")) m.fit.input_spans = track_from(timeline.at("input"));
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
  if (std::none_of(gpus.begin(), gpus.end(), [](const GpuSummary& gpu) { return gpu.why_not.empty(); })) {
    if (run.gpu_note.empty()) run.gpu_note = "no GPU sampled";
  } else if (gpus.size() == 1) {
    run.gpu = figures(gpus[0]);
  } else {
    run.gpu = json::array();
    for (const GpuSummary& gpu : gpus) {
      json entry = {{"cuda_device", gpu.cuda_device}, {"pci_bus_id", text(gpu.pci_bus_id)}};
      if (gpu.why_not.empty()) {
        entry.update(figures(gpu));
        entry["note"] = text(gpu.sampling_error);
      } else {  // never sampled: no figures
        for (const char* field : {"device", "mean_utilization_percent", "max_utilization_percent", "peak_used_bytes",
                                  "total_bytes"})
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

void to_json(json& j, const RunReport& run) {
  json models = json::array();
  for (const ModelReport& m : run.models) {
    json model = m;
    model.erase("timeline");  // the steps go to --trace, not into the document
    models.push_back(std::move(model));
  }
  json overlap;
  if (run.overlap)
    overlap = {{"fraction", run.overlap->fraction()}, {"busy_s", run.overlap->busy_s},
               {"concurrent_s", run.overlap->concurrent_s}, {"kind", text(run.overlap_kind)}};
  json scheduler;
  if (run.scheduler) {
    const SchedulerReport& sr = *run.scheduler;
    json rungs = json::array();
    for (const RungSummary& r : sr.rungs)
      rungs.push_back({{"bracket", r.bracket}, {"epochs", r.epochs}, {"trials", r.trials}, {"kept", r.kept},
                       {"best", metric(r.best)}, {"median", metric(r.median)}, {"worst", metric(r.worst)}});
    scheduler = {{"spec", sr.spec},
                 {"rungs", rungs},
                 {"samples", sr.samples},
                 {"full_samples", sr.full_samples},
                 {"compute_fraction", sr.full_samples > 0 ? json(double(sr.samples) / double(sr.full_samples)) : json()}};
  }
  j = {{"backend", text(run.backend)},
       {"device_name", text(run.device_name)},
       {"device_schedule", text(run.device_schedule)},
       {"mps", run.mps},
       {"mode", run.mode},
       {"repeat", run.repeat},
       {"concurrency", run.concurrency},
       {"concurrency_reason", text(run.concurrency_reason)},
       {"training_threads", run.training_threads},
       {"pools_kept", run.pools_kept},
       {"injected_fault", text(run.injected_fault)},
       {"resumed_models", run.resumed_models},
       {"data", {{"source", text(run.data)}, {"bytes", run.data_bytes}}},
       {"host_peak_rss_bytes", run.host_peak_rss_bytes},
       {"workers_peak_rss_bytes", run.workers_peak_rss_bytes},
       {"process_startup_s", metric(run.process_startup_s)},
       {"startup_s", metric(run.startup_s)},
       {"train_s", metric(run.train_s)},
       {"wall_s", run.wall_s},
       {"samples_per_s", metric(run.samples_per_s)},
       {"speedup_vs_serial", metric(run.speedup_vs_serial)},
       {"serial_wall_s", metric(run.serial_wall_s)},
       {"overlap", overlap},
       {"gpu", run.gpu},
       {"gpu_note", text(run.gpu_note)},
       {"error", text(run.error)},
       {"auto", run.auto_choice},
       {"rank_by", text(run.rank_by)},
       {"ranking", run.ranking},
       {"scheduler", scheduler},
       {"ranks", run.ranks},
       {"sweep", run.sweep},
       {"shard", run.shard},
       {"shards", run.shards},
       {"machine", run.machine ? json(*run.machine) : json()},
       {"unjudged", text(why_unjudged(run))},
       {"models", models}};
}

void to_json(json& j, const MachineRecord& m) {
  j = {{"multifit", m.multifit},
       {"cores", m.cores},
       {"hardware_threads", m.hardware_threads},
       {"memory_total_bytes", m.memory_total_bytes},
       {"load_average_before", m.load_average_before},
       {"load_average_after", m.load_average_after},
       {"others_busy_cores", metric_json(m.others_busy_cores)},
       {"cpu_pressure", metric_json(m.cpu_pressure)},
       {"busy", m.busy.empty() ? json() : json(m.busy)}};
}

void write_json(const std::vector<RunReport>& runs, const std::string& path) {
  json doc;
  if (runs.size() == 1) {
    doc = runs[0];
  } else {
    const bool one_mode = std::all_of(runs.begin(), runs.end(), [&](const RunReport& r) { return r.mode == runs[0].mode; });
    const int repeats = std::max_element(runs.begin(), runs.end(), [](const RunReport& a, const RunReport& b) {
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
