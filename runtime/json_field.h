#pragma once
// Field: one value of a JSON document that a user wrote (a model spec, its preprocessing list) and
// its path in that document, so that every check can name the file, the place, the value and the
// rule. A missing key is a Field too: its readers fail with "missing" and what the key must hold.
//
// Every failure is an mf::UserError of one line, in one wording:
//   SOURCE: PATH: got VALUE; expected WHAT      a value of the wrong type or out of range (wrong)
//   SOURCE: PATH: missing; expected WHAT        a required key that is not there (wrong)
//   SOURCE: PATH: unknown key (did you mean "KEY"?); allowed keys: A, B, C      (allow_keys)
//   SOURCE: PATH: PROBLEM; ALLOWED              a rule of the caller's, across keys (fail)
// SOURCE names the document (a file name); PATH is like "fit.batch_size" or
// "preprocessing[1].height_factor", "top level" for the root; VALUE is the JSON text as `shown`
// writes it. It stays one line: values are escaped, and a key with a control character is quoted.
#include <climits>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/names.h"

namespace mf {

// the keys an object allows, in the order messages list them
using Keys = std::span<const char* const>;

// "a, b, c".
std::string join(Keys keys);
bool contains(Keys keys, std::string_view key);
// A value as JSON text for a message: escaped (so it stays on one line) and cut short, because a
// misplaced object could be arbitrarily large.
std::string shown(const nlohmann::json& value);
// An integer in [low, high], else nullopt. No integer ranges below zero occur in a spec, so the
// bounds are unsigned. Floats and booleans are never integers, even 10.0: a spec says what it
// means.
std::optional<uint64_t> integer_in(const nlohmann::json& value, uint64_t low, uint64_t high);

class Field {
 public:
  // The document's root, or a value at `path` in it. The Field refers to `value` and `source`,
  // which must outlive it and every Field read from it.
  Field(const nlohmann::json& value, const std::string& source, std::string path = "")
      : value_(&value), source_(&source), path_(std::move(path)) {}

  const nlohmann::json& value() const { return *value_; }
  const std::string& path() const { return path_; }
  const std::string& source() const { return *source_; }
  std::string where() const { return *source_ + ": " + (path_.empty() ? "top level" : path_); }

  [[noreturn]] void fail(const std::string& problem, const std::string& allowed) const;
  // The value is not what the key takes.
  [[noreturn]] void wrong(const std::string& allowed) const;
  // The value is none of `names`: "got VALUE (did you mean ...?); expected one of A, B".
  [[noreturn]] void wrong_name(const std::vector<std::string>& names) const;

  // The value of `key` in this object, missing or not.
  Field at(const std::string& key) const;
  Field item(size_t index) const;                               // of an array, index below its size
  std::optional<Field> optional(const std::string& key) const;  // nullopt when missing

  void require_object(const std::string& allowed) const;
  // An unknown key is refused, with the allowed key it was likely meant to be (one not given
  // already).
  void allow_keys(Keys keys) const;
  void object(Keys keys) const;  // an object of these keys alone

  int positive_int(uint64_t max = INT_MAX) const;
  int count(uint64_t max = INT_MAX) const;  // 0 to max
  uint64_t non_negative_integer() const;
  // Checked after the conversion to float: 1e-50 becomes 0 and 1e39 becomes infinite there.
  float positive_number() const;
  // A number in [0, 1): 0 is allowed, 1 is not, since a beta or momentum of 1 never forgets (and
  // Adam's bias correction divides by 1 - beta).
  float fraction() const;
  // A finite number in [low, high], or in (low, high] when `open_low`; `allowed` says which.
  double number_in(double low, double high, const std::string& allowed,
                   bool open_low = false) const;
  // A pair [a, b] of finite numbers, each in [low, high].
  std::pair<double, double> pair_in(double low, double high, const std::string& allowed) const;
  bool boolean() const;
  std::string text() const;  // non-empty
  // A name of `table`; a near miss is named ("did you mean").
  template <class E, size_t N>
  E one_of(const Named<E> (&table)[N]) const {
    if (value_->is_string())
      if (const std::optional<E> value = find_named(table, value_->get_ref<const std::string&>()))
        return *value;
    std::vector<std::string> names;
    for (const Named<E>& entry : table) names.push_back(entry.name);
    wrong_name(names);
  }

 private:
  float number(bool (*ok)(float), const char* allowed) const;

  const nlohmann::json* value_;
  const std::string* source_;
  std::string path_;
  bool missing_ = false;
};

}  // namespace mf
