#pragma once
// An enum's names, written once, in one table beside the enum: the table reads a name at the edge
// (a spec, a command line, a child process's message), refusing an unknown one with what is
// allowed, and prints the value back, so the two never disagree.
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/error.h"

namespace mf {

// "a, b, c": text(item) for each of `items`, ", " between them. The lists of names and values that
// messages give are all joined by it.
template <class Items, class Text>
std::string joined(const Items& items, Text text) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += ", ";
    first = false;
    out += text(item);
  }
  return out;
}
// "a, b, c" of strings already written.
inline std::string joined(const std::vector<std::string>& items) {
  return joined(items, [](const std::string& item) { return item; });
}

// A Keras object's names for the enum value it is: its identifier and its class.
template <class E>
struct KerasName {
  // "adam", "mse"; nullptr where Keras has none (a layer is named by its class)
  const char* identifier;
  const char* class_name;  // "Adam", "MeanSquaredError"
  E value;
};

// The Keras class of `value` in `table`.
template <class E, size_t N>
constexpr const char* class_of(const KerasName<E> (&table)[N], E value) {
  for (const KerasName<E>& entry : table)
    if (entry.value == value) return entry.class_name;
  return "unknown";  // never for a value of the enum: every table names all of its values
}

template <class E>
struct Named {
  const char* name;
  E value;
};

template <class E, size_t N>
constexpr const char* name_of(const Named<E> (&table)[N], E value) {
  for (const Named<E>& entry : table)
    if (entry.value == value) return entry.name;
  return "unknown";  // never for a value of the enum: every table names all of its values
}

template <class E, size_t N>
constexpr std::optional<E> find_named(const Named<E> (&table)[N], std::string_view name) {
  for (const Named<E>& entry : table)
    if (name == entry.name) return entry.value;
  return std::nullopt;
}

// The same for a table of Keras names, by their identifiers.
template <class E, size_t N>
constexpr const char* name_of(const KerasName<E> (&table)[N], E value) {
  for (const KerasName<E>& entry : table)
    if (entry.value == value) return entry.identifier;
  return "unknown";
}
template <class E, size_t N>
constexpr std::optional<E> find_named(const KerasName<E> (&table)[N], std::string_view name) {
  for (const KerasName<E>& entry : table)
    if (entry.identifier && name == entry.identifier) return entry.value;
  return std::nullopt;
}
template <class E, size_t N>
std::string names_of(const KerasName<E> (&table)[N]) {
  return joined(table, [](const KerasName<E>& entry) { return std::string(entry.identifier); });
}

// "grow, reserve".
template <class E, size_t N>
std::string names_of(const Named<E> (&table)[N]) {
  return joined(table, [](const Named<E>& entry) { return std::string(entry.name); });
}

// The keys of a traits table's entry (kOptimizerTraits' and the like), up to its first nullptr.
template <size_t N>
std::vector<const char*> listed(const char* const (&keys)[N]) {
  std::vector<const char*> out;
  for (const char* key : keys)
    if (key) out.push_back(key);
  return out;
}

// Each value's names as a reference lists them, in the table's order: the first name, then its
// other names in parentheses ("mse (mean_squared_error)", "swish (silu)").
template <class Table, class NameOf>
std::vector<std::string> names_with_aliases(const Table& table, NameOf name_of_entry) {
  std::vector<std::string> out;
  for (size_t i = 0; i < std::size(table); ++i) {
    bool seen = false;
    for (size_t j = 0; j < i; ++j) seen = seen || table[j].value == table[i].value;
    if (seen) continue;
    std::vector<std::string> aliases;
    for (size_t j = i + 1; j < std::size(table); ++j)
      if (table[j].value == table[i].value) aliases.push_back(name_of_entry(table[j]));
    out.push_back(name_of_entry(table[i]) + (aliases.empty() ? "" : " (" + joined(aliases) + ")"));
  }
  return out;
}
template <class E, size_t N>
std::vector<std::string> names_with_aliases(const Named<E> (&table)[N]) {
  return names_with_aliases(table, [](const Named<E>& e) { return std::string(e.name); });
}
template <class E, size_t N>
std::vector<std::string> names_with_aliases(const KerasName<E> (&table)[N]) {
  return names_with_aliases(table, [](const KerasName<E>& e) { return std::string(e.identifier); });
}

// The value named `name`; an unknown name is a UserError: "`what`: 'x' is not one of grow,
// reserve".
template <class Table>
auto parse_named(const Table& table, std::string_view name, const std::string& what) {
  if (const auto value = find_named(table, name)) return *value;
  throw UserError(what + ": '" + std::string(name) + "' is not one of " + names_of(table));
}

}  // namespace mf
