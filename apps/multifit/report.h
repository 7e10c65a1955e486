#pragma once
// The result document of a run (DESIGN.md "Results"): written to a temporary
// file, then renamed, so a reader never sees half of it.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nn/fit.h"

namespace mf {

enum class ModelStatus { ok, diverged, oom, failed };

struct ModelReport {
  std::string name;
  ModelStatus status = ModelStatus::ok;
  std::string error;
  FitResult fit;
  std::optional<double> solo_s, slowdown;
  Evaluation test;
  // Which metrics exist: a metric that exists and is NaN was computed as NaN, not left out.
  bool has_accuracy = false;  // every loss but mse
  bool validated = false;     // fit.validation_split took rows
  bool tested = false;        // a test set was evaluated
  bool fitted = false;        // fit ran (train_s is measured)
  nlohmann::json settings;    // the settings the model trained with, command-line overrides applied
  std::vector<PlanPart> plan;  // the model's memory plan, part by part (empty when the spec was not read)
  int64_t params = 0;
  PoolStats memory;
};

struct RunReport {
  std::string backend, device, mode = "serial", data;
  size_t data_bytes = 0;  // the process's resident data sets, apart from the pools
  size_t host_peak_rss_bytes = 0;  // the process's peak resident host memory (getrusage), pools and data included
  double wall_s = 0;
  std::optional<double> startup_s, samples_per_s;  // absent when a failure came before they were measured
  std::optional<double> speedup_vs_serial;
  std::vector<ModelReport> models;
};

const char* to_string(ModelStatus s);
nlohmann::json to_json(const RunReport& run);
void write_json(const RunReport& run, const std::string& path);

}  // namespace mf
