#include "nn/pack_key.h"

#include <charconv>

#include "nn/settings.h"
#include "runtime/names.h"

namespace mf {
namespace {

// The shortest text that reads back as x (0.2, not 0.20000000000000001).
std::string shortest(double x) {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, x).ptr);
}

const char* set_or_none(bool set) { return set ? "set" : "none"; }

// The optimizer's setting that clips its gradients (kernels/optimizer_math.h's ClipKind), or none.
const char* clip_name(ClipKind clip) {
  constexpr const char* kNames[] = {"none", "clipnorm", "global_clipnorm", "clipvalue"};
  return kNames[int(clip)];
}

void add_layer(std::vector<PackField>& fields, size_t i, const LayerSpec& l) {
  const std::string at = "layers[" + std::to_string(i) + "].";
  fields.push_back({at + "type", to_string(l.kind)});
  if (l.kind == LayerKind::dense) {
    fields.push_back({at + "units", std::to_string(l.units)});
    fields.push_back({at + "activation", to_string(l.activation)});
    fields.push_back({at + "use_bias", l.use_bias ? "true" : "false"});
    fields.push_back({at + "kernel_regularizer", set_or_none(l.kernel_regularizer.any())});
    fields.push_back({at + "bias_regularizer", set_or_none(l.bias_regularizer.any())});
    fields.push_back({at + "activity_regularizer", set_or_none(l.activity_regularizer.any())});
  }
  if (l.kind == LayerKind::activation)
    fields.push_back({at + "activation", to_string(l.activation)});
  if (l.kind == LayerKind::batch_normalization) {
    fields.push_back({at + "center", l.center ? "true" : "false"});
    fields.push_back({at + "scale", l.scale ? "true" : "false"});
  }
}

}  // namespace

std::vector<PackField> pack_fields(const ModelSpec& spec) {
  const OptimizerSpec& o = spec.optimizer;
  const FitSpec& fit = spec.fit;
  std::vector<PackField> fields = {
      {"input", std::to_string(spec.input)},
      {"loss", to_string(spec.loss.kind)},
      {"loss.from_logits", spec.loss.from_logits ? "true" : "false"},
      {"targets", std::to_string(spec.target_cols())},
      {"fit.sample_weight", fit.sample_weight ? "true" : "false"},
      {"fit.class_weight", fit.class_weight.empty()
                               ? std::string("none")
                               : joined(fit.class_weight,
                                        [](const auto& entry) {
                                          return std::to_string(entry.first) + ": " +
                                                 shortest(double(entry.second));
                                        })},
      {"optimizer.name", to_string(o.kind)},
      {"optimizer's slots",
       joined(optimizer_slots(o), [](const char* slot) { return std::string(slot); })},
      {"optimizer's clipping", clip_name(o.clip)},
      {"layers", std::to_string(spec.layers.size())}};
  for (size_t i = 0; i < spec.layers.size(); ++i) add_layer(fields, i, spec.layers[i]);
  fields.push_back({"metrics", joined(spec.metric_list(), [](const MetricSpec& m) {
                      return std::string(name_of(kMetricNames, m.kind));
                    })});
  fields.push_back({"fit.batch_size", std::to_string(fit.batch_size)});
  fields.push_back({"fit.epochs", std::to_string(fit.epochs)});
  fields.push_back({"fit.validation_split", shortest(fit.validation_split)});
  fields.push_back({"fit.shuffle", fit.shuffle ? "true" : "false"});
  fields.push_back({"pipeline.workers", std::to_string(spec.pipeline.workers)});
  fields.push_back({"pipeline.prefetch", std::to_string(spec.pipeline.prefetch)});
  fields.push_back({"preprocessing", set_or_none(!spec.preprocessing.empty())});
  fields.push_back({"memory.mode", to_string(spec.memory.mode)});
  const auto& sms = spec.device_share.sms;
  fields.push_back({"device.sms", sms ? std::to_string(*sms) : "none"});
  return fields;
}

std::string pack_key(const ModelSpec& spec) {
  std::string key;
  for (const PackField& field : pack_fields(spec))
    key.append(field.name).append("=").append(field.value).append(";");
  return key;
}

std::string pack_difference(const ModelSpec& spec, const ModelSpec& member) {
  const std::vector<PackField> a = pack_fields(spec), b = pack_fields(member);
  std::string differences;
  // The layers' count comes before their fields, and each layer's type before its own: the two
  // lists name the same fields up to a difference in either, after which they are not compared.
  for (size_t i = 0; i < a.size() && i < b.size() && a[i].name == b[i].name; ++i) {
    if (a[i].value == b[i].value) continue;
    differences +=
        (differences.empty() ? "" : "; ") + a[i].name + " " + a[i].value + ", not " + b[i].value;
    if (a[i].name == "layers" || a[i].name.ends_with(".type")) break;
  }
  return differences;
}

}  // namespace mf
