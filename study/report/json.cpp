#include "study/report/report.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "runtime/nvml_monitor.h"
#include "runtime/output_file.h"

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

}  // namespace

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
          {"pack", m.pack ? json(*m.pack) : json()},
          {"pack_members", m.pack_members ? json(*m.pack_members) : json()},
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
          {"serial_wall_s", number(run.serial_wall_s)},
          {"overlap", overlap},
          {"gpu", run.gpu},
          {"gpu_note", text(run.gpu_note)},
          {"error", text(run.error)},
          {"auto", run.auto_choice},
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
  write_file_atomically(path, "the result file", [&](std::ostream& out) { out << doc.dump(2) << '\n'; });
}

}  // namespace mf
