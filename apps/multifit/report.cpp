#include "apps/multifit/report.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "runtime/error.h"

namespace mf {
namespace {

using nlohmann::json;

// A metric: a number; "nan", "inf" or "-inf" when it was computed and is not finite (JSON has no
// such numbers); null when there is none (no test set, no validation rows, no accuracy for mse).
json metric(double v) {
  if (std::isfinite(v)) return v;
  return std::isinf(v) ? json(v > 0 ? "inf" : "-inf") : json("nan");
}
json metric(double v, bool present) { return present ? metric(v) : json(); }
json number(const std::optional<double>& v) { return v ? metric(*v) : json(); }
json bytes(const std::optional<size_t>& b) { return b ? json(*b) : json(); }
json text(const std::string& s) { return s.empty() ? json() : json(s); }  // null: not reached

// metric() read back: NAN for null.
double metric_from(const json& j) {
  if (j.is_null()) return NAN;
  if (j.is_string()) return j == "nan" ? NAN : j == "inf" ? INFINITY : -INFINITY;
  return j.get<double>();
}
std::optional<double> number_from(const json& j) {
  return j.is_null() ? std::nullopt : std::optional<double>(metric_from(j));
}

json to_json(const ModelReport& m) {
  json plan = json::array();
  for (const PlanPart& part : m.plan) plan.push_back({{"name", part.name}, {"bytes", part.bytes}});
  json epochs = json::array();
  for (const EpochMetrics& e : m.fit.epochs)
    epochs.push_back({{"loss", metric(e.loss)},
                      {"accuracy", metric(e.accuracy, m.has_accuracy)},
                      {"val_loss", metric(e.val_loss, m.validated)},
                      {"val_accuracy", metric(e.val_accuracy, m.validated && m.has_accuracy)},
                      {"seconds", e.seconds},
                      {"samples_per_s", e.samples_per_s}});
  return {{"name", m.name},
          {"settings", m.settings},
          {"status", to_string(m.status)},
          {"error", text(m.error)},
          {"device", m.device},
          {"cuda_visible_devices", text(m.visible_devices)},
          {"pid", m.pid},
          {"startup_s", number(m.startup_s)},
          {"epochs", epochs},
          {"train_s", m.fitted ? json(m.fit.train_s) : json()},
          {"samples_per_s", number(m.samples_per_s)},
          {"solo_s", number(m.solo_s)},
          {"slowdown", number(m.slowdown)},
          {"test_loss", metric(m.test.loss, m.tested)},
          {"test_accuracy", metric(m.test.accuracy, m.tested && m.has_accuracy)},
          {"params", m.params},
          {"memory",
           {{"cap_bytes", m.memory.cap_bytes},
            {"reserved_bytes", m.memory.reserved_bytes},
            {"peak_bytes", m.memory.peak_bytes},
            {"process_device_bytes", bytes(m.process_device_bytes)},
            {"process_peak_rss_bytes", bytes(m.process_peak_rss_bytes)},
            {"in_use_before_release_bytes", bytes(m.in_use_before_release_bytes)},
            {"in_use_after_release_bytes", bytes(m.in_use_after_release_bytes)},
            {"plan", plan}}}};
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

// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const json& v) {
  std::string s = v.is_null() ? "" : v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// Fields joined by commas, ending the line.
std::string csv_line(const std::vector<json>& fields) {
  std::string line;
  for (const json& field : fields) {
    if (&field != &fields.front()) line += ',';
    line += csv_field(field);
  }
  return line + '\n';
}

// Writes `body` to path through a temporary file and a rename.
void write_file(const std::string& path, const std::string& body) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << body;
    if (!out.flush()) throw UserError(path + ": cannot write the result file");
  }
  std::error_code error;
  std::filesystem::rename(tmp, path, error);
  if (error) throw UserError(path + ": cannot write the result file (" + error.message() + ")");
}

}  // namespace

const char* to_string(ModelStatus s) {
  switch (s) {
    case ModelStatus::ok: return "ok";
    case ModelStatus::diverged: return "diverged";
    case ModelStatus::oom: return "oom";
    default: return "failed";
  }
}

json to_json(const RunReport& run) {
  json models = json::array();
  for (const ModelReport& m : run.models) models.push_back(to_json(m));
  json overlap;
  if (run.overlap)
    overlap = {{"fraction", run.overlap->fraction()}, {"busy_s", run.overlap->busy_s},
               {"concurrent_s", run.overlap->concurrent_s}};
  return {{"backend", text(run.backend)},
          {"device", text(run.device)},
          {"mode", run.mode},
          {"concurrency", run.concurrency},
          {"data", {{"source", text(run.data)}, {"bytes", run.data_bytes}}},
          {"host_peak_rss_bytes", run.host_peak_rss_bytes},
          {"workers_peak_rss_bytes", bytes(run.workers_peak_rss_bytes)},
          {"process_startup_s", number(run.process_startup_s)},
          {"startup_s", number(run.startup_s)},
          {"train_s", number(run.train_s)},
          {"wall_s", run.wall_s},
          {"samples_per_s", number(run.samples_per_s)},
          {"speedup_vs_serial", number(run.speedup_vs_serial)},
          {"overlap", overlap},
          {"gpu", run.gpu},
          {"gpu_note", text(run.gpu_note)},
          {"models", models}};
}

void write_json(const std::vector<RunReport>& runs, const std::string& path) {
  json doc;
  if (runs.size() == 1) {
    doc = to_json(runs[0]);
  } else {
    doc = {{"mode", "all"}, {"runs", json::array()}};
    for (const RunReport& run : runs) doc["runs"].push_back(to_json(run));
  }
  write_file(path, doc.dump(2) + '\n');
}

void write_csv(const std::vector<RunReport>& runs, const std::string& path) {
  static const char* const kRun[] = {"mode",    "backend",       "concurrency",      "wall_s",
                                     "startup_s", "train_s", "samples_per_s", "speedup_vs_serial"};
  static const char* const kModel[] = {"name",          "status",   "error",     "device",
                                       "startup_s",     "train_s",  "samples_per_s", "solo_s",
                                       "slowdown",      "test_loss", "test_accuracy", "params"};
  static const char* const kMemory[] = {"cap_bytes", "reserved_bytes", "peak_bytes"};
  std::vector<json> header;
  for (const char* c : kRun) header.push_back(std::string("run_") + c);
  header.insert(header.end(), {"overlap", "models"});
  header.insert(header.end(), std::begin(kModel), std::end(kModel));
  header.push_back("epochs");
  header.insert(header.end(), std::begin(kMemory), std::end(kMemory));
  std::string body = csv_line(header);
  for (const RunReport& run : runs) {
    const json r = to_json(run);
    std::vector<json> prefix;
    for (const char* c : kRun) prefix.push_back(r[c]);
    prefix.push_back(r["overlap"].is_null() ? json() : r["overlap"]["fraction"]);
    prefix.push_back(run.models.size());
    for (const json& m : r["models"]) {
      std::vector<json> row = prefix;
      for (const char* c : kModel) row.push_back(m[c]);
      row.push_back(m["epochs"].size());
      for (const char* c : kMemory) row.push_back(m["memory"][c]);
      body += csv_line(row);
    }
  }
  write_file(path, body);
}

json to_wire(const ModelReport& m) {
  json wire = to_json(m);
  wire["wire"] = {{"has_accuracy", m.has_accuracy}, {"validated", m.validated}, {"tested", m.tested},
                  {"fitted", m.fitted},             {"fit_status", int(m.fit.status)}, {"fit_why", m.fit.why},
                  {"steps", to_json(m.fit.steps)},  {"epoch_spans", to_json(m.fit.epoch_spans)},
                  {"samples", m.samples},           {"backend", m.backend}, {"device_name", m.device_name},
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
  m.test = {metric_from(j.at("test_loss")), metric_from(j.at("test_accuracy"))};
  m.settings = j.at("settings");
  for (const json& part : j.at("memory").at("plan")) m.plan.push_back({part.at("name"), part.at("bytes")});
  m.params = j.at("params");
  const json& memory = j.at("memory");
  m.memory = {memory.at("cap_bytes"), memory.at("reserved_bytes"), 0, memory.at("peak_bytes")};
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
