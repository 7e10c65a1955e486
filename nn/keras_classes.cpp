// The Keras classes a spec takes, by family, with the settings their Keras signatures take by
// position: what the Python package's multifit.keras makes its classes of, so that Python keeps no
// table of Keras's names.
#include <nlohmann/json.hpp>

#include "nn/initializers.h"
#include "nn/spec.h"
#include "nn/spec_parts.h"

namespace mf {
namespace {

using nlohmann::json;

template <class E, size_t N, class Positional>
json entries(const KerasName<E> (&names)[N], Positional positional) {
  json out = json::array();
  for (const KerasName<E>& n : names)
    out.push_back({{"class_name", n.class_name},
                   {"identifier", n.identifier ? json(n.identifier) : json()},
                   {"positional", positional(n.value)}});
  return out;
}

}  // namespace

json keras_classes() {
  json out;
  // Adam(learning_rate=0.001, beta_1=...): only the rate is given by position in practice, and the
  // optimizers' other settings are not in one order across Keras's classes
  out["optimizers"] = entries(kOptimizerNames, [](OptimizerKind) { return json{"learning_rate"}; });
  // ExponentialDecay(initial_learning_rate, decay_steps, decay_rate, staircase=False): the
  // required settings; CosineDecay's `name` comes before its warm-up in Keras's signature
  out["schedules"] = entries(kScheduleNames, [](ScheduleKind kind) {
    const ScheduleTraits& t = schedule_traits(kind);
    return json(std::vector<const char*>(t.keys, t.keys + t.required));
  });
  // Huber(delta=1.0, ...), BinaryCrossentropy(from_logits=False, label_smoothing=0.0, ...)
  out["losses"] = entries(kLossNames, [](Loss kind) { return json(loss_keys(kind)); });
  // Precision(thresholds=None, ...), AUC(num_thresholds=200, curve="ROC", ...)
  out["metrics"] = entries(kMetricNames, [](Metric kind) {
    if (kind == Metric::auc) return json{"num_thresholds", "curve", "summation_method"};
    return is_ratio(kind) ? json{"thresholds"} : json::array();
  });
  // RandomNormal(mean=0.0, stddev=0.05, seed=None), GlorotUniform(seed=None)
  out["initializers"] = entries(kInitializerNames, [](InitializerKind kind) {
    const InitializerTraits& t = initializer_traits(kind);
    json keys = json(listed(t.keys));
    if (t.seeded) keys.push_back("seed");
    return keys;
  });
  out["regularizers"] = entries(kRegularizerNames, [](RegularizerKind kind) {
    return json(listed(regularizer_traits(kind).keys));
  });
  return out;
}

}  // namespace mf
