#include "study/job.h"

#include <algorithm>

#include "runtime/json_forms.h"

namespace mf {

MF_JSON_BY_NAME(BackendKind, kBackendNames)
MF_JSON_BY_NAME(GemmImpl, kGemmImplNames)
MF_JSON_BY_NAME(ActivationImpl, kActivationImplNames)
MF_JSON_BY_NAME(GraphsChoice, kGraphsNames)
MF_JSON_BY_NAME(PoolMode, kPoolModeNames)
MF_JSON_BY_NAME(RankBy, kRankByNames)
MF_JSON_BY_NAME(MpsUse, kMpsUseNames)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BackendOptions, kind, gemm, activations, graphs, device, threads)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SpecOverrides, epochs, batch_size, learning_rate, seed,
                                   memory_limit, memory_mode)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RunOptions, models_path, data, backend, overrides, devices,
                                   concurrency, pack_size, quiet, verbose, rank_by, timeline,
                                   calibration_steps, stall_timeout_s, keep_pools, inject_fault,
                                   scheduler, mps, sm_share, sm_partitions)

SchedulerSpec scheduler_for(SchedulerSpec spec, const std::vector<Job>& jobs) {
  spec.max_epochs = 0;
  for (const Job& job : jobs)
    if (job.spec) spec.max_epochs = std::max(spec.max_epochs, job.spec->fit.epochs);
  if (spec.max_epochs > 0 && spec.rungs(0).empty())
    throw UserError(
        "the scheduler has no rung under the models' epochs (" + std::to_string(spec.max_epochs) +
        ", --epochs?): its first is at grace_epochs, " + std::to_string(spec.grace_epochs) +
        "; train more epochs or lower grace_epochs");
  return spec;
}

ModelSpec with_overrides(ModelSpec spec, const SpecOverrides& o) {
  if (o.epochs) spec.fit.epochs = *o.epochs;
  if (o.batch_size) spec.fit.batch_size = *o.batch_size;
  if (o.learning_rate) {  // a constant rate, in place of a schedule the spec may have
    spec.optimizer.learning_rate = *o.learning_rate;
    spec.optimizer.schedule.reset();
  }
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
    job.values = entry.values;
    if (entry.spec) {
      job.spec = with_overrides(*entry.spec, options.overrides);
      job.data = options.data.empty() ? job.spec->data : options.data;
    }
    jobs.push_back(std::move(job));
  }
  spread_over_devices(jobs, options.devices);
  return jobs;
}

void spread_over_devices(std::vector<Job>& jobs, const std::vector<int>& devices) {
  if (devices.empty()) return;
  for (size_t i = 0; i < jobs.size(); ++i) jobs[i].device = devices[i % devices.size()];
}

nlohmann::json to_json(const Job& job) {
  return {{"index", job.index}, {"name", job.name},     {"spec", to_json(*job.spec)},
          {"data", job.data},   {"device", job.device}, {"load", job.load},
          {"save", job.save},   {"keep", job.keep},     {"values", job.values}};
}

Job job_from_json(const nlohmann::json& json) {
  Job job;
  job.index = json.at("index");
  job.name = json.at("name");
  job.spec = parse_model_spec(json.at("spec"), job.name);
  job.data = json.at("data");
  job.device = json.at("device");
  job.load = json.at("load");
  job.save = json.at("save");
  job.keep = json.at("keep");
  job.values = json.at("values");
  return job;
}

nlohmann::json to_json(const RunOptions& options) { return options; }

RunOptions run_options_from_json(const nlohmann::json& json) { return json.get<RunOptions>(); }

}  // namespace mf
