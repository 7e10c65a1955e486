#include "nn/callbacks.h"

#include <algorithm>
#include <cmath>

#include "nn/fit.h"

namespace mf {

std::optional<double> monitored(const ModelSpec& spec, const std::string& monitor,
                                const EpochMetrics& e) {
  const bool validation = monitor.rfind("val_", 0) == 0;
  const std::string name = validation ? monitor.substr(4) : monitor;
  const auto present = [](double v) {
    return std::isnan(v) ? std::nullopt : std::optional<double>(v);
  };
  if (name == "loss") return present(validation ? e.val_loss : e.loss);
  const std::vector<MetricSpec> metrics = spec.metric_list();
  for (size_t i = 0; i < metrics.size(); ++i)
    if (metrics[i].name == name) {
      const std::vector<double>& values = validation ? e.val_metrics : e.metrics;
      return i < values.size() ? present(values[i]) : std::nullopt;
    }
  return std::nullopt;
}

namespace {

// Keras's auto mode: "max" for a metric whose values go up as it improves (a metric's _direction
// "up": the accuracies, precision, recall, AUC).
bool auto_maximizes(const ModelSpec& spec, const std::string& monitor) {
  const std::string name = monitor.rfind("val_", 0) == 0 ? monitor.substr(4) : monitor;
  for (const MetricSpec& m : spec.metric_list())
    if (m.name == name) return is_accuracy(m.kind) || is_ratio(m.kind) || m.kind == Metric::auc;
  return false;  // the loss
}

}  // namespace

Improvement::Improvement(const ModelSpec& spec, const std::string& monitor, MonitorMode mode,
                         double min_delta)
    : maximizes_(mode == MonitorMode::max ||
                 (mode == MonitorMode::automatic && auto_maximizes(spec, monitor))),
      min_delta_(std::fabs(min_delta)) {}

bool Improvement::operator()(double value, std::optional<double> reference) const {
  if (!reference) return true;
  return maximizes_ ? value - min_delta_ > *reference : value + min_delta_ < *reference;
}

EarlyStopping::EarlyStopping(const EarlyStoppingSpec& spec, const ModelSpec& model)
    : spec_(spec), improves_(model, spec.monitor, spec.mode, spec.min_delta) {}

EarlyStopping::Decision EarlyStopping::on_epoch_end(int epoch, std::optional<double> value) {
  Decision d;
  if (!value || epoch < spec_.start_from_epoch) return d;
  if (!seen_) {  // Keras: the first weights it sees are the best until others beat them
    seen_ = true;
    d.best = true;
    best_epoch_ = epoch;
  }
  ++wait_;
  if (improves_(*value, best_)) {
    best_ = *value;
    best_epoch_ = epoch;
    d.best = true;
    // The wait starts again only for a value that beats the baseline as well.
    if (!spec_.baseline || improves_(*value, spec_.baseline)) wait_ = 0;
    return d;
  }
  d.stop = wait_ >= spec_.patience && epoch > 0;
  return d;
}

ReduceLROnPlateau::ReduceLROnPlateau(const ReduceLROnPlateauSpec& spec, const ModelSpec& model)
    : spec_(spec), improves_(model, spec.monitor, spec.mode, spec.min_delta) {}

std::optional<float> ReduceLROnPlateau::on_epoch_end(std::optional<double> value, float rate) {
  if (!value) return std::nullopt;
  if (cooldown_ > 0) --cooldown_, wait_ = 0;
  if (improves_(*value, best_)) {
    best_ = *value;
    wait_ = 0;
    return std::nullopt;
  }
  if (cooldown_ > 0 || ++wait_ < spec_.patience) return std::nullopt;
  // Keras reads the rate as a Python float, multiplies in double and stores float32.
  if (!(double(rate) > double(float(spec_.min_lr)))) return std::nullopt;
  cooldown_ = spec_.cooldown, wait_ = 0;
  return float(std::max(double(rate) * spec_.factor, spec_.min_lr));
}

}  // namespace mf
