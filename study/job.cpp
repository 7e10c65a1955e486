#include "study/job.h"

namespace mf {

ModelSpec with_overrides(ModelSpec spec, const SpecOverrides& o) {
  if (o.epochs) spec.fit.epochs = *o.epochs;
  if (o.batch_size) spec.fit.batch_size = *o.batch_size;
  if (o.learning_rate) spec.optimizer.learning_rate = *o.learning_rate;
  if (o.seed) spec.seed = *o.seed;
  if (o.memory_limit) spec.memory.limit_bytes = *o.memory_limit;
  if (o.memory_mode) spec.memory.mode = *o.memory_mode;
  return spec;
}

std::vector<Job> make_jobs(const Sweep& sweep, const RunOptions& options) {
  std::vector<Job> jobs;
  for (const SweepEntry& entry : sweep.models) {
    Job job;
    job.index = jobs.size();
    job.name = entry.name;
    job.error = entry.error;
    if (entry.spec) {
      job.spec = with_overrides(*entry.spec, options.overrides);
      job.spec_json = entry.json;
      job.data = options.data.empty() ? job.spec->data : options.data;
    }
    if (!options.devices.empty()) job.device = options.devices[job.index % options.devices.size()];
    jobs.push_back(std::move(job));
  }
  return jobs;
}

nlohmann::json to_json(const Job& job) {
  return {{"index", job.index}, {"name", job.name}, {"spec", job.spec_json}, {"data", job.data}, {"device", job.device}};
}

Job job_from_json(const nlohmann::json& json, const RunOptions& options) {
  Job job;
  job.index = json.at("index");
  job.name = json.at("name");
  job.spec_json = json.at("spec");
  job.spec = with_overrides(parse_model_spec(job.spec_json, job.name), options.overrides);
  job.data = json.at("data");
  job.device = json.at("device");
  return job;
}

// Optional values: null when unset.
template <class T>
nlohmann::json optional_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}
template <class T>
std::optional<T> optional_from(const nlohmann::json& j) {
  return j.is_null() ? std::nullopt : std::optional<T>(j.get<T>());
}

nlohmann::json to_json(const RunOptions& o) {
  const SpecOverrides& s = o.overrides;
  return {{"sweep", o.sweep},
          {"data", o.data},
          {"backend",
           {{"name", o.backend.name},
            {"gemm", o.backend.gemm},
            {"activations", o.backend.activations},
            {"graphs", o.backend.graphs}}},
          {"overrides",
           {{"epochs", optional_json(s.epochs)},
            {"batch_size", optional_json(s.batch_size)},
            {"learning_rate", optional_json(s.learning_rate)},
            {"seed", optional_json(s.seed)},
            {"memory_limit", optional_json(s.memory_limit)},
            {"memory_mode", s.memory_mode ? nlohmann::json(to_string(*s.memory_mode)) : nlohmann::json()}}},
          {"devices", o.devices},
          {"concurrency", o.concurrency},
          {"quiet", o.quiet},
          {"timeline", o.timeline},
          {"calibration_steps", o.calibration_steps}};
}

RunOptions run_options_from_json(const nlohmann::json& j) {
  RunOptions o;
  o.sweep = j.at("sweep");
  o.data = j.at("data");
  o.backend = {j.at("backend").at("name"), j.at("backend").at("gemm"), j.at("backend").at("activations"),
               j.at("backend").at("graphs")};
  const nlohmann::json& s = j.at("overrides");
  o.overrides.epochs = optional_from<int>(s.at("epochs"));
  o.overrides.batch_size = optional_from<int>(s.at("batch_size"));
  o.overrides.learning_rate = optional_from<float>(s.at("learning_rate"));
  o.overrides.seed = optional_from<uint64_t>(s.at("seed"));
  o.overrides.memory_limit = optional_from<size_t>(s.at("memory_limit"));
  if (!s.at("memory_mode").is_null())
    o.overrides.memory_mode = s.at("memory_mode") == "reserve" ? PoolMode::reserve : PoolMode::grow;
  o.devices = j.at("devices").get<std::vector<int>>();
  o.concurrency = j.at("concurrency");
  o.quiet = j.at("quiet");
  o.timeline = j.at("timeline");
  o.calibration_steps = j.at("calibration_steps");
  return o;
}

}  // namespace mf
