// The CSV rows of a run: one per model and mode, with its run's figures, for tables and plots.
#include <iterator>
#include <ostream>

#include "study/report/report.h"
#include "runtime/output_file.h"

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

// Fields joined by commas, ending the line.
std::string csv_line(const std::vector<json>& fields) {
  std::string line;
  for (const json& field : fields) {
    if (&field != &fields.front()) line += ',';
    line += csv_field(field);
  }
  return line + '\n';
}

}  // namespace

void write_csv(const std::vector<RunReport>& runs, const std::string& path) {
  static const char* const kRun[] = {"mode",    "backend",       "concurrency",      "wall_s",
                                     "startup_s", "train_s", "samples_per_s", "speedup_vs_serial"};
  static const char* const kModel[] = {"name",          "status",   "error",     "device",
                                       "startup_s",     "train_s",  "samples_per_s", "solo_s",
                                       "slowdown",      "test_loss", "test_accuracy", "params",
                                       "pack",          "pack_members"};
  static const char* const kMemory[] = {"cap_bytes", "reserved_bytes", "peak_bytes"};
  static const char* const kSettings[] = {"graphs"};
  std::vector<json> header;
  for (const char* c : kRun) header.push_back(std::string("run_") + c);
  header.insert(header.end(), {"overlap", "models"});
  header.insert(header.end(), std::begin(kModel), std::end(kModel));
  header.push_back("epochs");
  header.insert(header.end(), std::begin(kMemory), std::end(kMemory));
  header.insert(header.end(), std::begin(kSettings), std::end(kSettings));
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
      for (const char* c : kSettings) row.push_back(m["settings"].is_object() ? m["settings"].value(c, json()) : json());
      body += csv_line(row);
    }
  }
  write_file_atomically(path, "the CSV file", [&](std::ostream& out) { out << body; });
}

}  // namespace mf
