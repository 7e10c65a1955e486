#include "nn/scheduler_spec.h"

#include <algorithm>

#include "runtime/json_field.h"

namespace mf {
namespace {

using nlohmann::json;

constexpr const char* kKeys[] = {"type",         "metric",           "mode",
                                 "grace_epochs", "reduction_factor", "max_epochs"};
constexpr uint64_t kMostEpochs = 1000000;

}  // namespace

int SchedulerSpec::brackets() const {
  if (type != SchedulerKind::hyperband) return 1;
  int count = 1;
  for (int64_t r = int64_t(grace_epochs) * reduction_factor; r <= max_epochs; r *= reduction_factor)
    ++count;
  return count;
}

std::vector<int> SchedulerSpec::rungs(int bracket) const {
  std::vector<int> out;
  int64_t r = grace_epochs;
  for (int b = 0; b < bracket; ++b) r *= reduction_factor;
  for (; r < max_epochs; r *= reduction_factor) out.push_back(int(r));
  return out;
}

bool SchedulerSpec::is_rung(size_t trial, int epochs) const {
  const std::vector<int> all = rungs(bracket_of(trial));
  return std::find(all.begin(), all.end(), epochs) != all.end();
}

SchedulerSpec parse_scheduler(const std::string& path, const json& object,
                              std::optional<int>* file_max_epochs) {
  const Field root(object, path, "scheduler");
  root.object(kKeys);
  SchedulerSpec s;
  s.type = root.at("type").one_of(kSchedulerNames);
  if (const auto metric = root.optional("metric")) s.metric = metric->text();
  if (const auto mode = root.optional("mode")) s.mode = mode->one_of(kMonitorModeNames);
  if (const auto grace = root.optional("grace_epochs"))
    s.grace_epochs = grace->positive_int(kMostEpochs);
  if (const auto factor = root.optional("reduction_factor")) {
    s.reduction_factor = factor->positive_int(kMostEpochs);
    if (s.reduction_factor < 2)
      factor->wrong("an integer of at least 2 (each rung keeps 1 in reduction_factor)");
  }
  if (const auto max = root.optional("max_epochs"))
    *file_max_epochs = max->positive_int(kMostEpochs);
  return s;
}

void to_json(json& j, const SchedulerSpec& s) {
  j = {{"type", to_string(s.type)},
       {"metric", s.metric},
       {"mode", s.maximize ? "max" : "min"},
       {"grace_epochs", s.grace_epochs},
       {"reduction_factor", s.reduction_factor},
       {"max_epochs", s.max_epochs}};
}

void from_json(const json& j, SchedulerSpec& s) {
  s.type = *find_named(kSchedulerNames, j.at("type").get<std::string>());
  s.metric = j.at("metric").get<std::string>();
  s.maximize = j.at("mode").get<std::string>() == "max";
  s.mode = s.maximize ? MonitorMode::max : MonitorMode::min;
  s.grace_epochs = j.at("grace_epochs").get<int>();
  s.reduction_factor = j.at("reduction_factor").get<int>();
  s.max_epochs = j.at("max_epochs").get<int>();
}

}  // namespace mf
