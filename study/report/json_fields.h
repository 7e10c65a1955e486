#pragma once
// The field forms that the report structs' JSON forms share (json.cpp: a model's and the small
// structs'; run_json.cpp: a run's): a metric read back, a text that is null when empty, and a step
// timeline's track. Only those two files include this.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/timeline.h"

namespace mf::report_json {

// metric_json (report.h) read back: NAN for null, and "nan", "inf" and "-inf" as they say.
double metric_from(const nlohmann::json& j);
// Absent for null.
std::optional<double> optional_metric_from(const nlohmann::json& j);
// A text as the forms write it: null for "" (not reached), and back.
nlohmann::json text(const std::string& s);
std::string text_from(const nlohmann::json& j);
// A track of intervals as [[begin_s, end_s], ...], and back.
nlohmann::json intervals(const Track& track);
Track track_from(const nlohmann::json& j);

}  // namespace mf::report_json
