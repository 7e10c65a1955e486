#pragma once
// What nlohmann's JSON needs for multifit's structs to have one JSON form each, written with its
// type macros (NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE): std::optional as its value or null, and an
// enum by the names of its table (runtime/names.h).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/names.h"

namespace nlohmann {
template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& value) {
    if (value)
      j = *value;
    else
      j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& value) {
    if (j.is_null())
      value.reset();
    else
      value = j.get<T>();
  }
};
}  // namespace nlohmann

// to_json and from_json of enum E by the names in `table`; in E's namespace. A name the table does
// not have is a UserError.
#define MF_JSON_BY_NAME(E, table)                                                      \
  inline void to_json(nlohmann::json& j, E value) { j = ::mf::name_of(table, value); } \
  inline void from_json(const nlohmann::json& j, E& value) {                           \
    value = ::mf::parse_named(table, j.get_ref<const std::string&>(), #E);             \
  }

namespace mf {

// nlohmann's exception message without its "[json.exception.type_error.302] " tag, for a user's
// eyes.
inline std::string without_tag(const std::string& what) {
  const size_t tag = what.starts_with("[json.exception.") ? what.find("] ") : std::string::npos;
  return tag == std::string::npos ? what : what.substr(tag + 2);
}

}  // namespace mf
