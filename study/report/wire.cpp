// A model's report as a worker process sends it to the parent: the document's form plus what the
// parent needs beside it (which metrics exist, the step timeline), on one line of JSON.
#include <cmath>

#include "study/report/report.h"

namespace mf {
namespace {

using nlohmann::json;

// metric() read back: NAN for null.
double metric_from(const json& j) {
  if (j.is_null()) return NAN;
  if (j.is_string()) return j == "nan" ? NAN : j == "inf" ? INFINITY : -INFINITY;
  return j.get<double>();
}
std::optional<double> number_from(const json& j) {
  return j.is_null() ? std::nullopt : std::optional<double>(metric_from(j));
}

json to_json(const Track& track) {
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

json to_wire(const ModelReport& m) {
  json wire = to_json(m);
  wire["wire"] = {{"has_accuracy", m.has_accuracy}, {"validated", m.validated}, {"tested", m.tested},
                  {"fitted", m.fitted},             {"fit_status", int(m.fit.status)}, {"fit_why", m.fit.why},
                  {"steps", to_json(m.fit.steps)},  {"epoch_spans", to_json(m.fit.epoch_spans)},
                  {"samples", m.samples}, {"train_rows", m.train_rows},           {"backend", m.backend}, {"device_name", m.device_name},
                  {"data", m.data},                 {"data_bytes", m.data_bytes}};
  return wire;
}

ModelReport model_report_from_wire(const json& j) {
  ModelReport m;
  const json& w = j.at("wire");
  m.name = j.at("name");
  static const ModelStatus kStatuses[] = {ModelStatus::ok, ModelStatus::diverged, ModelStatus::oom, ModelStatus::failed};
  for (ModelStatus s : kStatuses)
    if (j.at("status") == to_string(s)) m.status = s;
  m.error = j.at("error").is_null() ? "" : j.at("error").get<std::string>();
  m.has_accuracy = w.at("has_accuracy");
  m.validated = w.at("validated");
  m.tested = w.at("tested");
  m.fitted = w.at("fitted");
  m.fit.status = FitStatus(w.at("fit_status").get<int>());
  m.fit.why = w.at("fit_why");
  m.fit.steps = track_from(w.at("steps"));
  m.fit.epoch_spans = track_from(w.at("epoch_spans"));
  for (const json& e : j.at("epochs"))
    m.fit.epochs.push_back({metric_from(e.at("loss")), metric_from(e.at("accuracy")), metric_from(e.at("val_loss")),
                            metric_from(e.at("val_accuracy")), e.at("seconds"), e.at("samples_per_s")});
  if (m.fitted) m.fit.train_s = j.at("train_s");
  m.startup_s = number_from(j.at("startup_s"));
  m.samples_per_s = number_from(j.at("samples_per_s"));
  m.samples = w.at("samples");
  m.train_rows = w.at("train_rows");
  m.test = {metric_from(j.at("test_loss")), metric_from(j.at("test_accuracy"))};
  m.settings = j.at("settings");
  for (const json& part : j.at("memory").at("plan")) m.plan.push_back({part.at("name"), part.at("bytes")});
  m.params = j.at("params");
  const json& memory = j.at("memory");
  m.memory = {memory.at("cap_bytes"), memory.at("reserved_bytes"), 0, memory.at("peak_bytes")};
  if (!memory.at("process_peak_rss_bytes").is_null()) m.process_peak_rss_bytes = memory.at("process_peak_rss_bytes");
  m.backend = w.at("backend");
  m.device_name = w.at("device_name");
  m.data = w.at("data");
  m.data_bytes = w.at("data_bytes");
  m.pid = j.at("pid");
  m.device = j.at("device");
  m.visible_devices = j.at("cuda_visible_devices").is_null() ? "" : j.at("cuda_visible_devices").get<std::string>();
  return m;
}

}  // namespace mf
