#pragma once
// A Keras object in a spec (a layer, optimizer, loss, metric, schedule, initializer, regularizer,
// callback), in any of the three forms Keras users meet:
//
//   "adam"                                        its string identifier, with its defaults
//   {"name": "adam", "learning_rate": 0.01}       flat: its kind under `kind_key` beside its
//   settings
//   {"class_name": "Adam", "config": {...}}       as Keras's get_config() and serialize() write it;
//                                                 "module", "registered_name" and "build_config"
//                                                 are taken and ignored; a function Keras
//                                                 serialized ("class_name": "function") is the
//                                                 name its config holds
//
// A kind is known by its identifier or its class name (keras.optimizers.Adam is "adam" or "Adam").
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/json_field.h"
#include "runtime/names.h"

namespace mf {

class KerasObject {
 public:
  // Reads `field`'s form. `kind_key` names the kind in the flat form ("type" for layers and
  // callbacks, "name" for the rest); `what` says what the field holds, for messages ("optimizer").
  // An object without a kind is a UserError, unless `default_kind` names the kind it then is.
  KerasObject(const Field& field, const char* kind_key, const std::string& what,
              const char* default_kind = nullptr);

  const std::string& kind() const { return kind_; }
  // Whether it is a function Keras serialized: named, like a string identifier, by its kind.
  bool is_function() const { return function_; }
  // Where the kind was written (for a message about it).
  const Field& kind_field() const { return kind_field_; }
  // The settings: the config object, or the flat object itself; nullopt for a string identifier.
  const std::optional<Field>& settings() const { return settings_; }
  // A setting, or nullopt where it is not given.
  std::optional<Field> setting(const std::string& key) const;
  // Refuses a setting that is not one of `keys` (nor the kind key of the flat form, nor Keras's
  // bookkeeping keys: name, and those `ignored` lists), with "did you mean". In Keras's serialized
  // form a setting left null is taken whatever its key (a newer Keras's, unset).
  void allow(Keys keys, Keys ignored = {}) const;

  // The value of `names` this object's kind is, or a UserError naming the kind, what is allowed and
  // the name it was likely meant to be. A kind without an identifier (a layer, a callback) may also
  // be written in lower case with underscores ("dense", "batch_normalization": multifit's layers of
  // before).
  template <class E, size_t N>
  E one_of(const KerasName<E> (&names)[N]) const {
    if (const KerasName<E>* n = find(names)) return n->value;
    unknown(list(names));
  }
  // As one_of, where `resolved` are identifiers of the family the caller resolves itself (Keras's
  // "accuracy", whose metric the model's shape decides): nullopt for one of them; the refusal
  // lists them first.
  template <class E, size_t N>
  std::optional<E> one_of(const KerasName<E> (&names)[N],
                          std::span<const char* const> resolved) const {
    for (const char* identifier : resolved)
      if (kind_ == identifier) return std::nullopt;
    if (const KerasName<E>* n = find(names)) return n->value;
    std::vector<std::pair<const char*, const char*>> known;
    for (const char* identifier : resolved) known.emplace_back(identifier, identifier);
    for (const auto& entry : list(names)) known.push_back(entry);
    unknown(known);
  }

  // Whether `kind`, as written, names `class_name`, a kind without an identifier (a layer, a
  // callback): the class name, or it in lower case with underscores.
  static bool names_class(const std::string& kind, const char* class_name) {
    return kind == class_name || folded(kind) == folded(class_name);
  }

 private:
  template <class E, size_t N>
  const KerasName<E>* find(const KerasName<E> (&names)[N]) const {
    for (const KerasName<E>& n : names)
      if ((n.identifier && kind_ == n.identifier) || kind_ == n.class_name ||
          (!n.identifier && names_class(kind_, n.class_name)))
        return &n;
    return nullptr;
  }
  template <class E, size_t N>
  static std::vector<std::pair<const char*, const char*>> list(const KerasName<E> (&names)[N]) {
    std::vector<std::pair<const char*, const char*>> out;
    for (const KerasName<E>& n : names) out.emplace_back(n.identifier, n.class_name);
    return out;
  }
  [[noreturn]] void unknown(const std::vector<std::pair<const char*, const char*>>& names) const;
  // A name in lower case without underscores: "BatchNormalization" and "batch_normalization" fold
  // alike.
  static std::string folded(const std::string& name);

  std::string what_, kind_;
  Field kind_field_;
  std::optional<Field> settings_;
  const char* kind_key_;
  bool flat_ = false;
  bool function_ = false;
};

// Keras's bookkeeping settings, written by get_config() and meaningless here, which every object
// takes and ignores: its name ("dense_1").
inline constexpr const char* kKerasBookkeeping[] = {"name"};

}  // namespace mf
