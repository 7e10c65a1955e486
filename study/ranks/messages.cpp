#include "study/ranks/messages.h"

#include "runtime/json_forms.h"

namespace mf {

using nlohmann::json;

void to_json(json& j, const Ready& m) {
  j = {{"host", m.host}, {"error", m.error}, {"run", m.run}};
}
void from_json(const json& j, Ready& m) {
  j.at("host").get_to(m.host);
  j.at("error").get_to(m.error);
  m.run = j.at("run");
}

void to_json(json& j, const ToTrain& m) { j = {{"jobs", m.jobs}}; }
void from_json(const json& j, ToTrain& m) { j.at("jobs").get_to(m.jobs); }

void to_json(json& j, const FromRank& m) {
  j = {{"ended", m.ended}, {"capacity", m.capacity}, {"figures", m.figures}};
}
void from_json(const json& j, FromRank& m) {
  j.at("ended").get_to(m.ended);
  j.at("capacity").get_to(m.capacity);
  j.at("figures").get_to(m.figures);
}

void to_json(json& j, const Share& m) { j = {{"places", m.places}}; }
void from_json(const json& j, Share& m) { j.at("places").get_to(m.places); }

void to_json(json& j, const EndedModel& e) {
  json report = e.report;
  report.erase("timeline");
  j = {{"report", std::move(report)}, {"exit_code", e.exit_code}};
}
void from_json(const json& j, EndedModel& e) {
  j.at("report").get_to(e.report);
  e.exit_code = j.at("exit_code");
}

void to_json(json& j, const PartFigures& f) {
  j = {{"line", f.line},
       {"train_s", f.train_s},
       {"samples", f.samples},
       {"concurrency", f.concurrency},
       {"concurrency_reason", f.concurrency_reason},
       {"training_threads", f.training_threads},
       {"host_peak_rss_bytes", f.host_peak_rss_bytes},
       {"workers_peak_rss_bytes", f.workers_peak_rss_bytes},
       {"resumed_models", f.resumed_models}};
}
void from_json(const json& j, PartFigures& f) {
  j.at("line").get_to(f.line);
  j.at("train_s").get_to(f.train_s);
  f.samples = j.at("samples");
  f.concurrency = j.at("concurrency");
  f.concurrency_reason = j.at("concurrency_reason");
  j.at("training_threads").get_to(f.training_threads);
  f.host_peak_rss_bytes = j.at("host_peak_rss_bytes");
  j.at("workers_peak_rss_bytes").get_to(f.workers_peak_rss_bytes);
  f.resumed_models = j.at("resumed_models");
}

}  // namespace mf
