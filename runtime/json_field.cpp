#include "runtime/json_field.h"

#include <cmath>
#include <vector>

#include "runtime/error.h"
#include "runtime/near_miss.h"

namespace mf {
namespace {

using nlohmann::json;

const json kMissing;  // the value of a missing key

// Keys come from the user and become part of a path; quote any that would break the line.
std::string path_key(const std::string& key) {
  for (unsigned char c : key)
    if (c < 0x20 || c == 0x7f) return shown(json(key));
  return key;
}

bool finite_in(const json& x, double low, double high, bool open_low = false) {
  if (!x.is_number()) return false;
  const double d = x.get<double>();
  return std::isfinite(d) && (open_low ? d > low : d >= low) && d <= high;
}

}  // namespace

std::string join(Keys keys) {
  return joined(keys, [](const char* key) { return std::string(key); });
}

bool contains(Keys keys, std::string_view key) {
  for (const char* k : keys)
    if (key == k) return true;
  return false;
}

std::string shown(const json& value) {
  constexpr size_t kMaxChars = 60;
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

std::optional<uint64_t> integer_in(const json& value, uint64_t low, uint64_t high) {
  uint64_t n = 0;
  if (value.is_number_unsigned()) {
    n = value.get<uint64_t>();
  } else if (value.is_number_integer()) {
    const int64_t signed_n = value.get<int64_t>();
    if (signed_n < 0) return std::nullopt;
    n = uint64_t(signed_n);
  } else {
    return std::nullopt;
  }
  if (n < low || n > high) return std::nullopt;
  return n;
}

void Field::fail(const std::string& problem, const std::string& allowed) const {
  throw UserError(where() + ": " + problem + "; " + allowed);
}

void Field::wrong(const std::string& allowed) const {
  fail(missing_ ? "missing" : "got " + shown(*value_), "expected " + allowed);
}

void Field::wrong_name(const std::vector<std::string>& names) const {
  const std::string allowed = joined(names);
  if (missing_ || !value_->is_string()) wrong("one of " + allowed);
  fail("got " + shown(*value_) + did_you_mean(value_->get<std::string>(), names),
       "expected one of " + allowed);
}

Field Field::at(const std::string& key) const {
  Field child(kMissing, *source_, (path_.empty() ? "" : path_ + ".") + path_key(key));
  const auto it = value_->find(key);
  child.missing_ = it == value_->end();
  if (!child.missing_) child.value_ = &*it;
  return child;
}

Field Field::item(size_t index) const {
  return Field((*value_)[index], *source_, path_ + "[" + std::to_string(index) + "]");
}

std::optional<Field> Field::optional(const std::string& key) const {
  Field child = at(key);
  return child.missing_ ? std::nullopt : std::optional<Field>(std::move(child));
}

void Field::require_object(const std::string& allowed) const {
  if (!value_->is_object()) wrong(allowed);
}

void Field::allow_keys(Keys keys) const {
  std::vector<std::string> absent;
  for (const char* key : keys)
    if (!value_->contains(key)) absent.push_back(key);
  for (const auto& entry : value_->items())
    if (!contains(keys, entry.key())) {
      at(entry.key())
          .fail("unknown key" + did_you_mean(entry.key(), absent), "allowed keys: " + join(keys));
    }
}

void Field::object(Keys keys) const {
  require_object("an object with keys " + join(keys));
  allow_keys(keys);
}

int Field::positive_int(uint64_t max) const {
  if (const auto n = integer_in(*value_, 1, max)) return int(*n);
  // Only say where the range ends when that is the problem.
  wrong(integer_in(*value_, 1, UINT64_MAX)
            ? "a positive integer no larger than " + std::to_string(max)
            : "a positive integer");
}

int Field::count(uint64_t max) const {
  if (const auto n = integer_in(*value_, 0, max)) return int(*n);
  wrong("a whole number from 0 to " + std::to_string(max));
}

uint64_t Field::non_negative_integer() const {
  if (const auto n = integer_in(*value_, 0, UINT64_MAX)) return *n;
  wrong("a non-negative integer");
}

float Field::positive_number() const {
  return number([](float x) { return x > 0.f; }, "a finite number > 0");
}

float Field::fraction() const {
  return number([](float x) { return x >= 0.f && x < 1.f; }, "a number in [0, 1)");
}

double Field::number_in(double low, double high, const std::string& allowed, bool open_low) const {
  if (!finite_in(*value_, low, high, open_low)) wrong(allowed);
  return value_->get<double>();
}

std::pair<double, double> Field::pair_in(double low, double high,
                                         const std::string& allowed) const {
  const json& v = *value_;
  if (!v.is_array() || v.size() != 2 || !finite_in(v[0], low, high) || !finite_in(v[1], low, high))
    wrong(allowed);
  return {v[0].get<double>(), v[1].get<double>()};
}

bool Field::boolean() const {
  if (!value_->is_boolean()) wrong("true or false");
  return value_->get<bool>();
}

std::string Field::text() const {
  if (!value_->is_string() || value_->get_ref<const std::string&>().empty())
    wrong("a non-empty string");
  return value_->get<std::string>();
}

float Field::number(bool (*ok)(float), const char* allowed) const {
  if (value_->is_number()) {
    const float x = value_->get<float>();
    if (std::isfinite(x) && ok(x)) return x;
  }
  wrong(allowed);
}

}  // namespace mf
