// The one JSON form of a model's report and of the small structs of a run's (report.h), and the
// field forms every report's form shares (json_fields.h). A run's form and the document:
// run_json.cpp.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "runtime/json_forms.h"
#include "study/report/json_fields.h"
#include "study/report/report.h"

namespace mf {

MF_JSON_BY_NAME(ModelStatus, kModelStatusNames)
MF_JSON_BY_NAME(FitStatus, kFitStatusNames)
MF_JSON_BY_NAME(OptimizerKind, kOptimizerNames)
MF_JSON_BY_NAME(PoolMode, kPoolModeNames)
MF_JSON_BY_NAME(Activation, kActivationNames)
// With defaults: a journal or document written before a field was added (hidden, activations) reads
// back.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TrainingSettings, optimizer, learning_rate, epochs,
                                                batch_size, validation_split, shuffle, seed,
                                                memory_mode, graphs, threads, hidden, activations,
                                                layers, schedule, pipeline_workers, prefetch)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PlanPart, name, bytes)
MF_JSON_BY_NAME(Metric, kMetricNames)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MetricSpec, name, kind)

using nlohmann::json;

namespace report_json {

double metric_from(const json& j) {
  if (j.is_null()) return NAN;
  if (j.is_string()) return j == "nan" ? NAN : j == "inf" ? INFINITY : -INFINITY;
  return j.get<double>();
}
std::optional<double> optional_metric_from(const json& j) {
  return j.is_null() ? std::nullopt : std::optional<double>(metric_from(j));
}
json text(const std::string& s) { return s.empty() ? json() : json(s); }
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

}  // namespace report_json

using namespace report_json;

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
  if (s.count < 1 || s.index >= s.count)
    throw std::invalid_argument("shard " + to_string(s) + ": expected I/N with 0 <= I < N");
}

void to_json(json& j, const RunPart& p) {
  j = {{"index", p.index},
       {"host", p.host},
       {"wall_s", p.wall_s},
       {"startup_s", p.startup_s},
       {"samples_per_s", p.samples_per_s},
       {"models", p.models}};
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
  for (size_t k = 0; k < metrics.size() && k < values.size(); ++k)
    out[metrics[k].name] = metric_json(values[k]);
  return out;
}
std::vector<double> named_metrics_from(const std::vector<MetricSpec>& metrics, const json& j) {
  std::vector<double> values;
  for (const MetricSpec& m : metrics)
    if (j.contains(m.name)) values.push_back(metric_from(j.at(m.name)));
  return values;
}

// A model's epochs: [{"loss", "accuracy", "val_loss", ...}], a metric null where the model has none
// (no accuracy, no validation rows), and back (`metrics`: the model's, which its epochs' are of).
json epochs_json(const ModelReport& m) {
  json epochs = json::array();
  for (const EpochMetrics& e : m.fit.epochs)
    epochs.push_back(
        {{"loss", metric_json(e.loss)},
         {"accuracy", metric_json(e.accuracy, m.has_accuracy)},
         {"val_loss", metric_json(e.val_loss, m.validated)},
         {"val_accuracy", metric_json(e.val_accuracy, m.validated && m.has_accuracy)},
         {"metrics", named_metrics(m.metrics, e.metrics)},
         {"val_metrics", named_metrics(m.metrics, e.val_metrics)},
         {"learning_rate", std::isnan(e.learning_rate) ? json() : json(e.learning_rate)},
         {"seconds", metric_json(e.seconds)},
         {"samples_per_s", metric_json(e.samples_per_s)},
         {"input_wait_s", e.input_wait_s},
         {"input_busy_s", e.input_busy_s}});
  return epochs;
}
std::vector<EpochMetrics> epochs_from(const json& j, const std::vector<MetricSpec>& metrics) {
  std::vector<EpochMetrics> epochs;
  for (const json& e : j) {
    EpochMetrics epoch;
    epoch.loss = metric_from(e.at("loss")), epoch.accuracy = metric_from(e.at("accuracy"));
    epoch.val_loss = metric_from(e.at("val_loss")),
    epoch.val_accuracy = metric_from(e.at("val_accuracy"));
    epoch.metrics = named_metrics_from(metrics, e.value("metrics", json::object()));
    epoch.val_metrics = named_metrics_from(metrics, e.value("val_metrics", json::object()));
    if (const json rate = e.value("learning_rate", json()); !rate.is_null())
      epoch.learning_rate = rate;
    epoch.seconds = metric_from(e.at("seconds")),
    epoch.samples_per_s = metric_from(e.at("samples_per_s"));
    epoch.input_wait_s = e.at("input_wait_s"), epoch.input_busy_s = e.at("input_busy_s");
    epochs.push_back(epoch);
  }
  return epochs;
}

// How fit ended: {"status", "why", "stopped_epoch", "stop_reason", "restored_epoch", "rungs"} (a
// rung: {"epochs", "value" ("nan": it had none), "kept"}); null when fit did not run, but a worker
// that died in training keeps the rungs its parent heard. And back, into `fit` (its epochs, train
// time and timeline apart).
json fit_json(const ModelReport& m) {
  if (!m.fitted && m.fit.rungs.empty()) return json();
  json rungs = json::array();
  for (const RungResult& r : m.fit.rungs)
    rungs.push_back({{"epochs", r.epochs}, {"value", metric_json(r.value)}, {"kept", r.kept}});
  return {{"status", m.fit.status},
          {"why", text(m.fit.why)},
          {"stopped_epoch", m.fit.stopped_epoch},
          {"stop_reason", text(m.fit.stop_reason)},
          {"restored_epoch", m.fit.restored_epoch},
          {"rungs", rungs}};
}
void fit_from(const json& j, FitResult& fit) {
  if (j.is_null()) return;
  fit.status = j.at("status");
  fit.why = text_from(j.at("why"));
  j.value("stopped_epoch", json()).get_to(fit.stopped_epoch);
  fit.stop_reason = text_from(j.value("stop_reason", json()));
  j.value("restored_epoch", json()).get_to(fit.restored_epoch);
  for (const json& rung : j.value("rungs", json::array()))  // absent from documents before it
    fit.rungs.push_back({rung.at("epochs"), metric_from(rung.at("value")), rung.at("kept")});
}

// The model's memory: its pool's figures, its process's, and its plan; and back.
json memory_json(const ModelReport& m) {
  return {{"cap_bytes", m.memory.cap_bytes},
          {"reserved_bytes", m.memory.reserved_bytes},
          {"in_use_bytes", m.memory.in_use_bytes},
          {"peak_bytes", m.memory.peak_bytes},
          {"process_device_bytes", m.process_device_bytes},
          {"process_peak_rss_bytes", m.process_peak_rss_bytes},
          {"in_use_before_release_bytes", m.in_use_before_release_bytes},
          {"in_use_after_release_bytes", m.in_use_after_release_bytes},
          {"plan", m.plan}};
}
void memory_from(const json& j, ModelReport& m) {
  m.memory = {j.at("cap_bytes"), j.at("reserved_bytes"), j.at("in_use_bytes"), j.at("peak_bytes")};
  j.at("process_device_bytes").get_to(m.process_device_bytes);
  j.at("process_peak_rss_bytes").get_to(m.process_peak_rss_bytes);
  j.at("in_use_before_release_bytes").get_to(m.in_use_before_release_bytes);
  j.at("in_use_after_release_bytes").get_to(m.in_use_after_release_bytes);
  j.at("plan").get_to(m.plan);
}

// The step timeline: {"steps", "epochs", "input"}, each a track; and back into `fit`.
json timeline_json(const FitResult& fit) {
  return {{"steps", intervals(fit.steps)},
          {"epochs", intervals(fit.epoch_spans)},
          {"input", intervals(fit.input_spans)}};
}
void timeline_from(const json& j, FitResult& fit) {
  fit.steps = track_from(j.at("steps"));
  fit.epoch_spans = track_from(j.at("epochs"));
  // A journal written before the input track, or by a part that had no timeline, has none.
  if (j.contains("input")) fit.input_spans = track_from(j.at("input"));
}

}  // namespace

void to_json(json& j, const ModelReport& m) {
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
       {"pack_boundary", text(m.pack_boundary)},
       {"sms", m.sms},
       {"sm_share", m.sm_share},
       {"data", {{"source", text(m.data)}, {"bytes", m.data_bytes}}},
       {"startup_s", metric_json(m.startup_s)},
       {"fit", fit_json(m)},
       {"epochs", epochs_json(m)},
       {"train_rows", m.train_rows},
       {"samples", m.samples},
       {"train_s", m.fitted ? json(m.fit.train_s) : json()},
       {"samples_per_s", metric_json(m.samples_per_s)},
       {"solo_s", metric_json(m.solo_s)},
       {"slowdown", metric_json(m.slowdown)},
       {"metrics",
        {{"accuracy", m.has_accuracy},
         {"validation", m.validated},
         {"test", m.tested},
         {"list", m.metrics}}},
       {"test_loss", metric_json(m.test.loss, m.tested)},
       {"test_accuracy", metric_json(m.test.accuracy, m.tested && m.has_accuracy)},
       {"test_metrics", named_metrics(m.metrics, m.test.metrics)},
       {"params", m.params},
       {"memory", memory_json(m)},
       {"timeline", timeline_json(m.fit)}};
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
  // absent from documents before it
  m.device_schedule = text_from(j.value("device_schedule", json()));
  m.visible_devices = text_from(j.at("cuda_visible_devices"));
  m.host = text_from(j.at("host"));
  m.pid = j.at("pid");
  j.at("mpi_rank").get_to(m.mpi_rank);
  j.at("pack").get_to(m.pack);
  j.at("pack_members").get_to(m.pack_members);
  m.pack_boundary = text_from(j.value("pack_boundary", json()));  // absent from documents before it
  j.value("sms", json()).get_to(m.sms);  // absent from documents before them
  j.value("sm_share", json()).get_to(m.sm_share);
  m.data = text_from(j.at("data").at("source"));
  m.data_bytes = j.at("data").at("bytes");
  m.startup_s = optional_metric_from(j.at("startup_s"));
  const json& metrics = j.at("metrics");
  m.metrics = metrics.value("list", std::vector<MetricSpec>());  // absent from documents before it
  fit_from(j.at("fit"), m.fit);
  m.fit.epochs = epochs_from(j.at("epochs"), m.metrics);
  m.train_rows = j.at("train_rows");
  m.samples = m.fit.samples = j.at("samples");
  m.fitted = !j.at("train_s").is_null();
  if (m.fitted) m.fit.train_s = j.at("train_s");
  m.samples_per_s = optional_metric_from(j.at("samples_per_s"));
  m.solo_s = optional_metric_from(j.at("solo_s"));
  m.slowdown = optional_metric_from(j.at("slowdown"));
  m.has_accuracy = metrics.at("accuracy");
  m.validated = metrics.at("validation");
  m.tested = metrics.at("test");
  m.test = {metric_from(j.at("test_loss")), metric_from(j.at("test_accuracy")),
            named_metrics_from(m.metrics, j.value("test_metrics", json::object()))};
  m.params = j.at("params");
  memory_from(j.at("memory"), m);
  // The document leaves the timeline out (it goes to --trace), and so do a journal and a rank's
  // message.
  if (const auto timeline = j.find("timeline"); timeline != j.end())
    timeline_from(*timeline, m.fit);
}

}  // namespace mf
