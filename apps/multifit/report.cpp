#include "apps/multifit/report.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "runtime/error.h"

namespace mf {
namespace {

// A metric: a number; "nan", "inf" or "-inf" when it was computed and is not finite (JSON has no
// such numbers); null when there is none (no test set, no validation rows, no accuracy for mse).
nlohmann::json metric(double v) {
  if (std::isfinite(v)) return v;
  return std::isinf(v) ? nlohmann::json(v > 0 ? "inf" : "-inf") : nlohmann::json("nan");
}
nlohmann::json metric(double v, bool present) { return present ? metric(v) : nlohmann::json(); }
nlohmann::json number(const std::optional<double>& v) { return v ? metric(*v) : nlohmann::json(); }

nlohmann::json to_json(const ModelReport& m) {
  nlohmann::json plan = nlohmann::json::array();
  for (const PlanPart& part : m.plan) plan.push_back({{"name", part.name}, {"bytes", part.bytes}});
  nlohmann::json epochs = nlohmann::json::array();
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
          {"error", m.error.empty() ? nlohmann::json() : nlohmann::json(m.error)},
          {"epochs", epochs},
          {"train_s", m.fitted ? nlohmann::json(m.fit.train_s) : nlohmann::json()},
          {"solo_s", number(m.solo_s)},
          {"slowdown", number(m.slowdown)},
          {"test_loss", metric(m.test.loss, m.tested)},
          {"test_accuracy", metric(m.test.accuracy, m.tested && m.has_accuracy)},
          {"params", m.params},
          {"memory",
           {{"cap_bytes", m.memory.cap_bytes},
            {"reserved_bytes", m.memory.reserved_bytes},
            {"peak_bytes", m.memory.peak_bytes},
            {"plan", plan}}}};
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

nlohmann::json to_json(const RunReport& run) {
  nlohmann::json models = nlohmann::json::array();
  for (const ModelReport& m : run.models) models.push_back(to_json(m));
  auto text = [](const std::string& s) { return s.empty() ? nlohmann::json() : nlohmann::json(s); };  // null: not reached
  return {{"backend", text(run.backend)},
          {"device", text(run.device)},
          {"mode", run.mode},
          {"data", {{"source", text(run.data)}, {"bytes", run.data_bytes}}},
          {"host_peak_rss_bytes", run.host_peak_rss_bytes},
          {"startup_s", number(run.startup_s)},
          {"wall_s", run.wall_s},
          {"samples_per_s", number(run.samples_per_s)},
          {"speedup_vs_serial", number(run.speedup_vs_serial)},
          {"gpu", nullptr},
          {"models", models}};
}

void write_json(const RunReport& run, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << to_json(run).dump(2) << '\n';
    if (!out.flush()) throw UserError(path + ": cannot write the result file");
  }
  std::error_code error;
  std::filesystem::rename(tmp, path, error);
  if (error) throw UserError(path + ": cannot write the result file (" + error.message() + ")");
}

}  // namespace mf
