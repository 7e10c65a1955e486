#include "nn/keras_object.h"

#include <cctype>

#include "runtime/near_miss.h"
#include "runtime/names.h"

namespace mf {

constexpr const char* kSerializedKeys[] = {"class_name", "config", "module", "registered_name",
                                           "build_config"};

namespace {
std::string with_article(const std::string& noun) {
  return (std::string("aeiou").find(noun[0]) != std::string::npos ? "an " : "a ") + noun;
}
}  // namespace

KerasObject::KerasObject(const Field& field, const char* kind_key, const std::string& what,
                         const char* default_kind)
    : what_(what), kind_field_(field), kind_key_(kind_key) {
  const nlohmann::json& value = field.value();
  if (value.is_string()) {
    kind_ = field.text();
    return;
  }
  field.require_object(with_article(what) + ": its name, an object with \"" + kind_key +
                       "\" and its settings, or " +
                       "{\"class_name\": ..., \"config\": {...}} as Keras writes it");
  if (value.contains("class_name")) {
    field.allow_keys(kSerializedKeys);
    kind_field_ = field.at("class_name");
    kind_ = kind_field_.text();
    // A function Keras serialized (a loss or metric given as one): its config is its name.
    if (const auto config = field.optional("config");
        kind_ == "function" && config && config->value().is_string()) {
      kind_field_ = *config;
      kind_ = config->text();
      function_ = true;
      return;
    }
    if (const auto config = field.optional("config"); config && !config->value().is_null()) {
      config->require_object("an object of the " + kind_ + "'s settings");
      settings_ = *config;
    }
    return;
  }
  flat_ = true;
  settings_ = field;
  if (const auto kind = field.optional(kind_key)) {
    kind_field_ = *kind;
    kind_ = kind->text();
  } else if (default_kind) {
    kind_ = default_kind;
  } else {
    field.at(kind_key).wrong("the name of " + with_article(what));
  }
}

std::optional<Field> KerasObject::setting(const std::string& key) const {
  return settings_ ? settings_->optional(key) : std::nullopt;
}

void KerasObject::allow(Keys keys, Keys ignored) const {
  if (!settings_) return;
  std::vector<const char*> allowed(keys.begin(), keys.end());
  // each key once, so that a message lists it once
  const auto allow_key = [&](const char* key) {
    if (!contains(allowed, key)) allowed.push_back(key);
  };
  if (flat_) allow_key(kind_key_);
  for (const char* key : ignored) allow_key(key);
  for (const char* key : kKerasBookkeeping) allow_key(key);
  // A newer Keras's get_config() writes its new settings too, unset (null) where they are not
  // used: taken in the serialized form that Keras writes, not in a flat object written by hand.
  if (!flat_)
    for (const auto& [key, value] : settings_->value().items())
      if (value.is_null()) allow_key(key.c_str());
  settings_->allow_keys(allowed);
}

std::string KerasObject::folded(const std::string& name) {
  std::string out;
  for (const char c : name)
    if (c != '_') out += char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void KerasObject::unknown(const std::vector<std::pair<const char*, const char*>>& names) const {
  std::vector<std::string> known, listed, listed_classes;
  for (const auto& [identifier, class_name] : names) {
    if (identifier) known.push_back(identifier);
    known.push_back(class_name);
    // One name per kind: an alias ("mean_squared_error" beside "mse") shares its class.
    if (std::find(listed_classes.begin(), listed_classes.end(), class_name) != listed_classes.end())
      continue;
    listed_classes.push_back(class_name);
    listed.push_back(identifier ? identifier : class_name);
  }
  kind_field_.fail(
      "unknown " + what_ + " " + shown(nlohmann::json(kind_)) + did_you_mean(kind_, known),
      "known: " + joined(listed) + (names.front().first ? " (or their Keras class names)" : ""));
}

}  // namespace mf
