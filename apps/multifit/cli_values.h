#pragma once
// Command-line values shared by the commands: validators that say what is allowed, the options both
// commands take (each registered here once), and the near miss of a mistyped name.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "backends/factory.h"
#include "runtime/names.h"
#include "study/job.h"
#include "study/report/report.h"

namespace mf {

// A whole number from `low` to `high`.
CLI::Validator whole_number(long long low, long long high);
// A float > 0 that stays finite and above 0 as a float (the spec's rule for learning_rate).
CLI::Validator positive_float();
// A seed: a whole number from 0 to 2^64 - 1, digits only (so -1 does not wrap around).
CLI::Validator seed_number();
// A size with its unit, "64MiB", turned into its bytes. Stricter than the spec's memory.limit,
// where a bare number is bytes: on a command line "--memory-limit 3" more likely means 3 of
// something else, so a number without a unit is refused with the units allowed.
CLI::Validator size_with_unit();
// --shard I/N: two whole numbers, 0 <= I < N <= 2^20 (a sweep's most models). read_shard reads
// `text` into `shard` and returns "" or why it cannot, in the words of a validator's message.
std::string read_shard(const std::string& text, Shard& shard);
CLI::Validator shard_value();
// One of an enum's names (its table, runtime/names.h), turned into the value; anything else is
// refused with the names allowed.
template <class E, size_t N>
CLI::Validator one_of(const Named<E> (&table)[N]) {
  return CLI::Validator(
      [&table](std::string& input) -> std::string {
        const std::optional<E> value = find_named(table, input);
        if (!value) return "'" + input + "' is not one of " + names_of(table);
        input = std::to_string(static_cast<int>(*value));  // what CLI11 reads into the enum
        return "";
      },
      [&table] {  // as CLI::IsMember lists its set
        std::string names;
        for (const Named<E>& entry : table)
          names += (names.empty() ? "" : ",") + std::string(entry.name);
        return "{" + names + "}";
      }());
}
// An option that takes one of the table's names into `value`, its default shown by name.
template <class E, size_t N>
CLI::Option* add_named_option(CLI::App& cmd, const std::string& flag, E& value,
                              const Named<E> (&table)[N], const std::string& help) {
  return cmd.add_option(flag, value, help)
      ->transform(one_of(table))
      ->default_str(name_of(table, value));
}

// The overrides of the spec, every model's for a sweep: --epochs, --batch-size, --learning-rate,
// --seed, --memory-limit and --memory.
void add_spec_overrides(CLI::App& cmd, SpecOverrides& overrides);
// --data: the data source instead of the spec's (every model's, for a sweep).
void add_data_option(CLI::App& cmd, std::string& data);
// --backend, --gemm, --activations and --graphs.
void add_backend_options(CLI::App& cmd, BackendOptions& backend);

}  // namespace mf
