#include "nn/scheduler_spec.h"

#include <algorithm>
#include <iterator>

#include "nn/sweep_axes.h"
#include "runtime/near_miss.h"

namespace mf {
namespace {

using nlohmann::json;

constexpr const char* kKeys[] = {"type", "metric", "mode", "grace_epochs", "reduction_factor", "max_epochs"};

[[noreturn]] void fail(const std::string& path, const std::string& where, const std::string& problem,
                       const std::string& allowed) {
  throw UserError(path + ": scheduler." + where + ": " + problem + "; " + allowed);
}

// A name of `table`, with "did you mean" for a near miss.
template <class E, size_t N>
E named(const std::string& path, const json& object, const char* key, const Named<E> (&table)[N]) {
  const json& value = object.at(key);
  if (value.is_string())
    if (const auto found = find_named(table, value.get<std::string>())) return *found;
  std::vector<std::string> known;
  for (const Named<E>& n : table) known.push_back(n.name);
  const std::string meant = value.is_string() ? near_miss(value.get<std::string>(), known) : "";
  fail(path, key, "got " + shown_escaped(value) + (meant.empty() ? "" : " (did you mean \"" + meant + "\"?)"),
       "allowed: " + names_of(table));
}

int positive(const std::string& path, const json& object, const char* key, int least) {
  const json& value = object.at(key);
  if (!value.is_number_integer() || value.get<int64_t>() < least || value.get<int64_t>() > 1000000)
    fail(path, key, "got " + shown_escaped(value), "expected an integer from " + std::to_string(least) + " to 1000000");
  return value.get<int>();
}

}  // namespace

int SchedulerSpec::brackets() const {
  if (type != SchedulerKind::hyperband) return 1;
  int count = 1;
  for (int64_t r = int64_t(grace_epochs) * reduction_factor; r <= max_epochs; r *= reduction_factor) ++count;
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

SchedulerSpec parse_scheduler(const std::string& path, const json& object, std::optional<int>* file_max_epochs) {
  if (!object.is_object())
    throw UserError(path + ": scheduler: got " + shown_escaped(object) + "; expected an object with a type (" +
                    names_of(kSchedulerNames) + ")");
  std::vector<std::string> known(std::begin(kKeys), std::end(kKeys));
  for (const auto& [key, value] : object.items())
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      const std::string meant = near_miss(key, known);
      fail(path, one_line(key), "unknown key" + (meant.empty() ? "" : " (did you mean \"" + meant + "\"?)"),
           "allowed keys: type, metric, mode, grace_epochs, reduction_factor, max_epochs");
    }
  if (!object.contains("type"))
    throw UserError(path + ": scheduler.type: missing; allowed: " + names_of(kSchedulerNames));
  SchedulerSpec s;
  s.type = named(path, object, "type", kSchedulerNames);
  if (object.contains("metric")) {
    const json& metric = object.at("metric");
    if (!metric.is_string() || metric.get<std::string>().empty() || !printable(metric.get<std::string>()))
      fail(path, "metric", "got " + shown_escaped(metric), "expected what a callback monitors, like \"val_accuracy\"");
    s.metric = metric.get<std::string>();
  }
  if (object.contains("mode")) s.mode = named(path, object, "mode", kMonitorModeNames);
  if (object.contains("grace_epochs")) s.grace_epochs = positive(path, object, "grace_epochs", 1);
  if (object.contains("reduction_factor")) s.reduction_factor = positive(path, object, "reduction_factor", 2);
  if (object.contains("max_epochs")) *file_max_epochs = positive(path, object, "max_epochs", 1);
  return s;
}

void to_json(json& j, const SchedulerSpec& s) {
  j = {{"type", to_string(s.type)},         {"metric", s.metric},
          {"mode", s.maximize ? "max" : "min"}, {"grace_epochs", s.grace_epochs},
          {"reduction_factor", s.reduction_factor}, {"max_epochs", s.max_epochs}};
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
