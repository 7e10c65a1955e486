#pragma once
// A run's document compared field by field, for the tests that read one back (from_json) and write
// it again: test_report_forms.cpp (every field set by hand) and test_report_json.cpp (real runs).
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "study/report/report.h"

namespace mf {

// Every field of `want` in `got` and no other, compared one at a time by its path
// ("models[0].memory.plan[1].bytes"), each value by its text, so that 3 and 3.0 differ.
inline void expect_same_fields(const nlohmann::json& got, const nlohmann::json& want,
                               const std::string& at = "the document") {
  if (got.is_object() && want.is_object()) {
    for (const auto& [key, value] : want.items()) {
      if (!got.contains(key))
        ADD_FAILURE() << at << "." << key << " is not read back";
      else
        expect_same_fields(got[key], value, at + "." + key);
    }
    for (const auto& [key, value] : got.items())
      if (!want.contains(key))
        ADD_FAILURE() << at << "." << key << " is written back but was not there";
  } else if (got.is_array() && want.is_array() && got.size() == want.size()) {
    for (size_t i = 0; i < want.size(); ++i)
      expect_same_fields(got[i], want[i], at + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(got.dump(), want.dump()) << at;
  }
}

// `document` read back as a run and written again.
inline nlohmann::json written_again(const nlohmann::json& document) {
  return nlohmann::json(document.get<RunReport>());
}

}  // namespace mf
