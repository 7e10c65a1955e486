// The CSV rows of a run: one per model and mode, with its run's figures, for tables and plots, made
// from the report structs. Each value is written as the document writes it (metric_json), empty
// where the document has null.
#include <string>

#include "runtime/output_file.h"
#include "study/report/report.h"

namespace mf {
namespace {

using nlohmann::json;

// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const json& v) {
  std::string s = v.is_null() ? "" : v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// A column: its header and its value, a figure of the model's run or of the model.
struct Column {
  const char* header;
  json (*of_run)(const RunReport& run) = nullptr;
  json (*of_model)(const ModelReport& m) = nullptr;
  json value(const RunReport& run, const ModelReport& m) const { return of_run ? of_run(run) : of_model(m); }
};

const Column kColumns[] = {
    {"run_mode", [](const RunReport& r) { return json(r.mode); }},
    {"run_backend", [](const RunReport& r) { return r.backend.empty() ? json() : json(r.backend); }},
    {"run_concurrency", [](const RunReport& r) { return json(r.concurrency); }},
    {"run_wall_s", [](const RunReport& r) { return json(r.wall_s); }},
    {"run_startup_s", [](const RunReport& r) { return metric_json(r.startup_s); }},
    {"run_train_s", [](const RunReport& r) { return metric_json(r.train_s); }},
    {"run_samples_per_s", [](const RunReport& r) { return metric_json(r.samples_per_s); }},
    {"run_speedup_vs_serial", [](const RunReport& r) { return metric_json(r.speedup_vs_serial); }},
    {"overlap", [](const RunReport& r) { return r.overlap ? json(r.overlap->fraction()) : json(); }},
    {"models", [](const RunReport& r) { return json(r.models.size()); }},
    {"name", nullptr, [](const ModelReport& m) { return json(m.name); }},
    {"status", nullptr, [](const ModelReport& m) { return json(to_string(m.status)); }},
    {"error", nullptr, [](const ModelReport& m) { return m.error.empty() ? json() : json(m.error); }},
    {"device", nullptr, [](const ModelReport& m) { return json(m.device); }},
    {"startup_s", nullptr, [](const ModelReport& m) { return metric_json(m.startup_s); }},
    {"train_s", nullptr, [](const ModelReport& m) { return m.fitted ? json(m.fit.train_s) : json(); }},
    {"samples_per_s", nullptr, [](const ModelReport& m) { return metric_json(m.samples_per_s); }},
    {"solo_s", nullptr, [](const ModelReport& m) { return metric_json(m.solo_s); }},
    {"slowdown", nullptr, [](const ModelReport& m) { return metric_json(m.slowdown); }},
    {"test_loss", nullptr, [](const ModelReport& m) { return metric_json(m.test.loss, m.tested); }},
    {"test_accuracy", nullptr,
     [](const ModelReport& m) { return metric_json(m.test.accuracy, m.tested && m.has_accuracy); }},
    {"params", nullptr, [](const ModelReport& m) { return json(m.params); }},
    {"pack", nullptr, [](const ModelReport& m) { return json(m.pack); }},
    {"pack_members", nullptr, [](const ModelReport& m) { return json(m.pack_members); }},
    {"epochs", nullptr, [](const ModelReport& m) { return json(m.fit.epochs.size()); }},
    {"cap_bytes", nullptr, [](const ModelReport& m) { return json(m.memory.cap_bytes); }},
    {"reserved_bytes", nullptr, [](const ModelReport& m) { return json(m.memory.reserved_bytes); }},
    {"peak_bytes", nullptr, [](const ModelReport& m) { return json(m.memory.peak_bytes); }},
    {"graphs", nullptr, [](const ModelReport& m) { return m.settings ? json(m.settings->graphs) : json(); }},
};

}  // namespace

void write_csv(const std::vector<RunReport>& runs, const std::string& path) {
  std::string body;
  // One line: `field(column)` for each column, joined by commas.
  const auto line = [&](const auto& field) {
    for (const Column& column : kColumns) {
      if (&column != kColumns) body += ',';
      body += csv_field(field(column));
    }
    body += '\n';
  };
  line([](const Column& column) { return json(column.header); });
  for (const RunReport& run : runs)
    for (const ModelReport& m : run.models) line([&](const Column& column) { return column.value(run, m); });
  write_output_file(path, "the CSV file", body);
}

}  // namespace mf
