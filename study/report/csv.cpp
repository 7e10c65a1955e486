// The CSV rows of a run: one per model and mode, with its run's figures, for tables and plots, made
// from the report structs. Each value is written as the document writes it (metric_json), empty
// where the document has null.
#include <algorithm>
#include <cmath>
#include <string>

#include "nn/sweep_axes.h"
#include "runtime/output_file.h"
#include "study/report/json_fields.h"
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

// A column: its header and its value, a figure of the model's run, of the model, or of the model in
// its run (its rank).
struct Column {
  const char* header;
  json (*of_run)(const RunReport& run) = nullptr;
  json (*of_model)(const ModelReport& m) = nullptr;
  json (*of_model_in_run)(const RunReport& run, const ModelReport& m) = nullptr;
  json value(const RunReport& run, const ModelReport& m) const {
    return of_run ? of_run(run) : of_model ? of_model(m) : of_model_in_run(run, m);
  }
};

// A training setting of the model, null when its spec was not read.
template <class Get>
json setting(const ModelReport& m, Get get) {
  return m.settings ? json(get(*m.settings)) : json();
}

// The hidden layers' widths as the grid's name part writes them: 100x10, 0 for none.
std::string hidden_text(const TrainingSettings& s) {
  std::vector<std::string> widths;
  for (int units : s.hidden) widths.push_back(std::to_string(units));
  return hidden_widths_text(widths);
}

// The hidden layers' activation: its name when they share one, else each layer's joined by '/'
// (tanh/relu); null without a hidden layer.
json activation_text(const TrainingSettings& s) {
  if (s.activations.empty()) return json();
  if (std::all_of(s.activations.begin(), s.activations.end(),
                  [&](Activation a) { return a == s.activations[0]; }))
    return to_string(s.activations[0]);
  std::string text;
  for (Activation a : s.activations) {
    if (!text.empty()) text += '/';
    text += to_string(a);
  }
  return text;
}

// The model's last completed epoch's metric, null without one (or without validation rows, or an
// accuracy).
json last_epoch(const ModelReport& m, double EpochMetrics::*metric, bool present) {
  return metric_json(m.fit.epochs.empty() ? NAN : m.fit.epochs.back().*metric,
                     present && !m.fit.epochs.empty());
}

// The value of the model's first metric of `kind`: its last epoch's (`values` of it: its metrics or
// val_metrics), or its test's; null where it has no such metric or no such value.
json metric_of(const ModelReport& m, Metric kind, std::vector<double> EpochMetrics::*values,
               bool present) {
  for (size_t k = 0; k < m.metrics.size(); ++k) {
    if (m.metrics[k].kind != kind) continue;
    const std::vector<double>* of = !values                ? &m.test.metrics
                                    : m.fit.epochs.empty() ? nullptr
                                                           : &(m.fit.epochs.back().*values);
    return of && k < of->size() ? metric_json((*of)[k], present) : json();
  }
  return json();
}

const Column kColumns[] = {
    {"run_mode", [](const RunReport& r) { return json(r.mode); }},
    {"run_backend",
     [](const RunReport& r) { return r.backend.empty() ? json() : json(r.backend); }},
    {"run_repeat", [](const RunReport& r) { return json(r.repeat); }},
    {"run_concurrency", [](const RunReport& r) { return json(r.concurrency); }},
    {"run_wall_s", [](const RunReport& r) { return json(r.wall_s); }},
    {"run_startup_s", [](const RunReport& r) { return metric_json(r.startup_s); }},
    {"run_train_s", [](const RunReport& r) { return metric_json(r.train_s); }},
    {"run_samples_per_s", [](const RunReport& r) { return metric_json(r.samples_per_s); }},
    {"run_speedup_vs_serial", [](const RunReport& r) { return metric_json(r.speedup_vs_serial); }},
    {"overlap",
     [](const RunReport& r) { return r.overlap ? json(r.overlap->fraction()) : json(); }},
    {"models", [](const RunReport& r) { return json(r.models.size()); }},
    {"rank_by", [](const RunReport& r) { return r.rank_by.empty() ? json() : json(r.rank_by); }},
    {"index", nullptr, [](const ModelReport& m) { return json(m.index); }},
    {"name", nullptr, [](const ModelReport& m) { return json(m.name); }},
    {"status", nullptr, [](const ModelReport& m) { return json(to_string(m.status)); }},
    {"rank", nullptr, nullptr,
     [](const RunReport& r, const ModelReport& m) {
       const auto at = std::find(r.ranking.begin(), r.ranking.end(), m.name);
       return at == r.ranking.end() ? json() : json(at - r.ranking.begin() + 1);
     }},
    {"optimizer", nullptr,
     [](const ModelReport& m) {
       return setting(m, [](const TrainingSettings& s) { return to_string(s.optimizer); });
     }},
    {"learning_rate", nullptr,
     [](const ModelReport& m) {
       return setting(m, [](const TrainingSettings& s) { return s.learning_rate; });
     }},
    {"batch_size", nullptr,
     [](const ModelReport& m) {
       return setting(m, [](const TrainingSettings& s) { return s.batch_size; });
     }},
    {"epochs_asked", nullptr,
     [](const ModelReport& m) {
       return setting(m, [](const TrainingSettings& s) { return s.epochs; });
     }},
    {"validation_split", nullptr,
     [](const ModelReport& m) {
       return setting(m, [](const TrainingSettings& s) { return s.validation_split; });
     }},
    {"seed", nullptr,
     [](const ModelReport& m) {
       return setting(m, [](const TrainingSettings& s) { return s.seed; });
     }},
    {"hidden", nullptr, [](const ModelReport& m) { return setting(m, hidden_text); }},
    {"activation", nullptr,
     [](const ModelReport& m) { return m.settings ? activation_text(*m.settings) : json(); }},
    {"loss", nullptr,
     [](const ModelReport& m) { return last_epoch(m, &EpochMetrics::loss, true); }},
    {"accuracy", nullptr,
     [](const ModelReport& m) { return last_epoch(m, &EpochMetrics::accuracy, m.has_accuracy); }},
    {"val_loss", nullptr,
     [](const ModelReport& m) { return last_epoch(m, &EpochMetrics::val_loss, m.validated); }},
    {"val_accuracy", nullptr,
     [](const ModelReport& m) {
       return last_epoch(m, &EpochMetrics::val_accuracy, m.validated && m.has_accuracy);
     }},
    {"error", nullptr,
     [](const ModelReport& m) { return m.error.empty() ? json() : json(m.error); }},
    {"device", nullptr, [](const ModelReport& m) { return json(m.device); }},
    {"host", nullptr, [](const ModelReport& m) { return m.host.empty() ? json() : json(m.host); }},
    {"mpi_rank", nullptr, [](const ModelReport& m) { return json(m.mpi_rank); }},
    {"startup_s", nullptr, [](const ModelReport& m) { return metric_json(m.startup_s); }},
    {"train_s", nullptr,
     [](const ModelReport& m) { return m.fitted ? json(m.fit.train_s) : json(); }},
    {"samples_per_s", nullptr, [](const ModelReport& m) { return metric_json(m.samples_per_s); }},
    {"input_wait_s", nullptr,
     [](const ModelReport& m) { return json(epochs_sum(m, &EpochMetrics::input_wait_s)); }},
    {"input_busy_s", nullptr,
     [](const ModelReport& m) { return json(epochs_sum(m, &EpochMetrics::input_busy_s)); }},
    {"solo_s", nullptr, [](const ModelReport& m) { return metric_json(m.solo_s); }},
    {"slowdown", nullptr, [](const ModelReport& m) { return metric_json(m.slowdown); }},
    {"test_loss", nullptr, [](const ModelReport& m) { return metric_json(m.test.loss, m.tested); }},
    {"test_accuracy", nullptr,
     [](const ModelReport& m) { return metric_json(m.test.accuracy, m.tested && m.has_accuracy); }},
    {"params", nullptr, [](const ModelReport& m) { return json(m.params); }},
    {"pack", nullptr, [](const ModelReport& m) { return json(m.pack); }},
    {"pack_members", nullptr, [](const ModelReport& m) { return json(m.pack_members); }},
    {"pack_boundary", nullptr,
     [](const ModelReport& m) { return report_json::text(m.pack_boundary); }},
    {"sms", nullptr, [](const ModelReport& m) { return json(m.sms); }},
    {"sm_share", nullptr, [](const ModelReport& m) { return json(m.sm_share); }},
    {"epochs", nullptr, [](const ModelReport& m) { return json(m.fit.epochs.size()); }},
    {"cap_bytes", nullptr, [](const ModelReport& m) { return json(m.memory.cap_bytes); }},
    {"reserved_bytes", nullptr, [](const ModelReport& m) { return json(m.memory.reserved_bytes); }},
    {"peak_bytes", nullptr, [](const ModelReport& m) { return json(m.memory.peak_bytes); }},
    {"data_bytes", nullptr, [](const ModelReport& m) { return json(m.data_bytes); }},
    // Its process's peak host memory: its worker's in processes mode, else the run's one process's.
    {"process_peak_rss_bytes", nullptr, nullptr,
     [](const RunReport& r, const ModelReport& m) {
       return m.process_peak_rss_bytes    ? json(*m.process_peak_rss_bytes)
              : r.host_peak_rss_bytes > 0 ? json(r.host_peak_rss_bytes)
                                          : json();
     }},
    {"process_device_bytes", nullptr,
     [](const ModelReport& m) { return json(m.process_device_bytes); }},
    {"graphs", nullptr,
     [](const ModelReport& m) { return m.settings ? json(m.settings->graphs) : json(); }},
    {"threads", nullptr,
     [](const ModelReport& m) { return m.settings ? json(m.settings->threads) : json(); }},
    {"pipeline_workers", nullptr,
     [](const ModelReport& m) { return m.settings ? json(m.settings->pipeline_workers) : json(); }},
    {"prefetch", nullptr,
     [](const ModelReport& m) { return m.settings ? json(m.settings->prefetch) : json(); }},
    {"layers", nullptr,
     [](const ModelReport& m) {
       return setting(m, [](const TrainingSettings& s) { return s.layers; });
     }},
    {"schedule", nullptr,
     [](const ModelReport& m) {
       return m.settings && !m.settings->schedule.empty() ? json(m.settings->schedule) : json();
     }},
    {"stopped_epoch", nullptr, [](const ModelReport& m) { return json(m.fit.stopped_epoch); }},
    {"stop_reason", nullptr,
     [](const ModelReport& m) {
       return m.fit.stop_reason.empty() ? json() : json(m.fit.stop_reason);
     }},
    {"restored_epoch", nullptr, [](const ModelReport& m) { return json(m.fit.restored_epoch); }},
    {"values", nullptr,
     [](const ModelReport& m) { return m.values.empty() ? json() : json(m.values.dump()); }},
    {"rungs_kept", nullptr,
     [](const ModelReport& m) {
       return m.fit.rungs.empty() ? json()
                                  : json(std::count_if(m.fit.rungs.begin(), m.fit.rungs.end(),
                                                       [](const RungResult& r) { return r.kept; }));
     }},

    {"final_learning_rate", nullptr,
     [](const ModelReport& m) {
       return m.fit.epochs.empty() || std::isnan(m.fit.epochs.back().learning_rate)
                  ? json()
                  : json(m.fit.epochs.back().learning_rate);
     }},
    {"mae", nullptr,
     [](const ModelReport& m) {
       return metric_of(m, Metric::mean_absolute_error, &EpochMetrics::metrics, true);
     }},
    {"mse", nullptr,
     [](const ModelReport& m) {
       return metric_of(m, Metric::mean_squared_error, &EpochMetrics::metrics, true);
     }},
    {"val_mae", nullptr,
     [](const ModelReport& m) {
       return metric_of(m, Metric::mean_absolute_error, &EpochMetrics::val_metrics, m.validated);
     }},
    {"val_mse", nullptr,
     [](const ModelReport& m) {
       return metric_of(m, Metric::mean_squared_error, &EpochMetrics::val_metrics, m.validated);
     }},
    {"test_mae", nullptr,
     [](const ModelReport& m) {
       return metric_of(m, Metric::mean_absolute_error, nullptr, m.tested);
     }},
    {"test_mse", nullptr,
     [](const ModelReport& m) {
       return metric_of(m, Metric::mean_squared_error, nullptr, m.tested);
     }},
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
    for (const ModelReport& m : run.models)
      line([&](const Column& column) { return column.value(run, m); });
  write_output_file(path, "the CSV file", body);
}

}  // namespace mf
