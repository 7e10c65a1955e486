#include "nn/sweep_search.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <random>

#include <boost/random/sobol.hpp>

#include "nn/spec.h"
#include "nn/sweep_axes.h"
#include "runtime/json_field.h"
#include "runtime/near_miss.h"

namespace mf {
namespace {

using nlohmann::json;

// The most trials a search draws: a sweep's bound on its models (nn/sweep.cpp).
constexpr uint64_t kMaxTrials = uint64_t(1) << 20;

enum class Draw { uniform, log_uniform, int_uniform, int_log_uniform, choice };
constexpr Named<Draw> kDraws[] = {{"uniform", Draw::uniform},
                                  {"log_uniform", Draw::log_uniform},
                                  {"int_uniform", Draw::int_uniform},
                                  {"int_log_uniform", Draw::int_log_uniform},
                                  {"choice", Draw::choice}};
enum class Sampler { random, sobol };
constexpr Named<Sampler> kSamplers[] = {{"random", Sampler::random}, {"sobol", Sampler::sobol}};
constexpr const char* kSearchKeys[] = {"trials", "sampler", "seed", "space"};

bool takes_floats(const std::string& axis) { return axis == "learning_rate" || axis == "dropout"; }
bool takes_ints(const std::string& axis) {
  return axis == "units" || axis == "batch_size" || axis == "epochs" || axis == "seed";
}
// The distributions an axis takes, for a message.
std::string allowed_for(const std::string& axis) {
  if (takes_floats(axis)) return "uniform, log_uniform or choice";
  if (takes_ints(axis)) return "int_uniform, int_log_uniform or choice";
  return "choice";
}

// One axis of the space, checked: how it draws and from what.
struct Dimension {
  std::string axis;
  Draw draw;
  double low = 0, high = 0;  // the range (ints: inclusive)
  json choices;              // choice's values
};

// `spec` is the axis's entry in the space: an object of one distribution, {"log_uniform": [1e-4,
// 0.1]}.
Dimension read_dimension(const std::string& axis, const Field& spec) {
  if (!spec.value().is_object() || spec.value().size() != 1)
    spec.wrong("an object of one distribution: " + allowed_for(axis));
  const std::string name = spec.value().begin().key();
  const Field range = spec.at(name);
  const std::optional<Draw> draw = find_named(kDraws, name);
  if (!draw) {
    std::vector<std::string> names;
    for (const Named<Draw>& d : kDraws) names.push_back(d.name);
    range.fail("unknown distribution" + did_you_mean(name, names),
               "allowed for " + axis + ": " + allowed_for(axis));
  }
  Dimension d{axis, *draw, 0, 0, json()};
  const json& value = range.value();
  if (d.draw == Draw::choice) {
    if (!value.is_array() || value.empty()) range.wrong("a non-empty array of values");
    if (axis == "hidden")
      for (size_t i = 0; i < value.size(); ++i)
        if (!value[i].is_array())
          range.item(i).wrong("an array of the hidden layers' widths, like [100, 10]");
    d.choices = value;
    return d;
  }
  const bool ints = d.draw == Draw::int_uniform || d.draw == Draw::int_log_uniform;
  if (ints ? !takes_ints(axis) : !takes_floats(axis))
    range.fail("the " + axis + " axis cannot draw from " + name, "allowed: " + allowed_for(axis));
  const bool log = d.draw == Draw::log_uniform || d.draw == Draw::int_log_uniform;
  const std::string allowed = std::string("[low, high] with low ") + (ints ? "<=" : "<") + " high" +
                              (ints ? ", both integers" : "") +
                              (log ? (ints ? ", low >= 1" : ", low > 0") : "");
  const bool pair =
      value.is_array() && value.size() == 2 && value[0].is_number() && value[1].is_number();
  if (!pair || (ints && (!value[0].is_number_integer() || !value[1].is_number_integer())))
    range.wrong(allowed);
  d.low = value[0].get<double>(), d.high = value[1].get<double>();
  if (!std::isfinite(d.low) || !std::isfinite(d.high) ||
      (ints ? d.low > d.high : d.low >= d.high) || (log && (ints ? d.low < 1 : d.low <= 0)))
    range.wrong(allowed);
  return d;
}

// The value a uniform number u in [0, 1) picks from a dimension.
json value_at(const Dimension& d, double u) {
  switch (d.draw) {
    case Draw::choice:
      return d.choices[std::min(d.choices.size() - 1, size_t(u * double(d.choices.size())))];
    case Draw::int_uniform:
      return int64_t(std::min(d.high, std::floor(d.low + u * (d.high - d.low + 1))));
    case Draw::int_log_uniform:  // log-uniform over [low, high + 1), floored
      return int64_t(std::min(
          d.high, std::floor(std::exp(std::log(d.low) + u * std::log((d.high + 1) / d.low)))));
    case Draw::uniform:
    case Draw::log_uniform: {
      const double x = d.draw == Draw::uniform
                           ? d.low + u * (d.high - d.low)
                           : std::exp(std::log(d.low) + u * std::log(d.high / d.low));
      // The float32 the spec keeps, written in its shortest form (0.00123, not 0.0012300000526).
      char buffer[32];
      const auto end = std::to_chars(buffer, buffer + sizeof buffer, float(x));
      return std::stod(std::string(buffer, end.ptr));
    }
  }
  return nullptr;
}

// The values a dimension can give that bound what it gives: each choice, a range's ends (a float
// range's high end is not drawn: the float below it is).
std::vector<json> extremes(const Dimension& d) {
  if (d.draw == Draw::choice) return {d.choices.begin(), d.choices.end()};
  if (d.draw == Draw::int_uniform || d.draw == Draw::int_log_uniform)
    return {int64_t(d.low), int64_t(d.high)};
  return {value_at(d, 0), value_at(d, std::nextafter(1.0, 0.0))};
}

// Every value a dimension can give makes a model the spec parser takes, checked once for the file:
// else one line naming the axis and the value (where the base itself is bad, its models say so).
void check_values(const std::string& path, const std::vector<Dimension>& dims, json base) {
  // each model is given its own
  if (base.is_object() && !base.contains("name")) base["name"] = "base";
  try {
    parse_model_spec(base, path);
  } catch (const UserError&) {
    return;
  }
  for (const Dimension& d : dims)
    for (const json& value : extremes(d)) {
      json spec = base;
      apply_axis(spec, d.axis, value);
      parse_model_spec(spec,
                       path + ": search.space." + d.axis + " gives " + axis_value_text(value));
    }
}

// A 64-bit draw as a double in [0, 1): its top 53 bits.
double unit(uint64_t bits) { return double(bits >> 11) * 0x1.0p-53; }

}  // namespace

std::vector<json> draw_trials(const std::string& path, const json& search, const json& base) {
  const Field root(search, path, "search");
  root.object(kSearchKeys);
  const size_t count = root.at("trials").positive_int(kMaxTrials);
  const auto sampler_field = root.optional("sampler");
  const Sampler sampler = sampler_field ? sampler_field->one_of(kSamplers) : Sampler::random;
  const auto seed_field = root.optional("seed");
  const uint64_t seed = seed_field ? seed_field->non_negative_integer() : 0;
  const Field space = root.at("space");
  std::vector<const char*> axis_keys;
  for (const SweepAxis& a : sweep_axes()) axis_keys.push_back(a.key);
  if (!space.value().is_object() || space.value().empty())
    space.wrong("an object of one or more axes: " + sweep_axis_list());
  space.allow_keys(axis_keys);
  std::vector<Dimension> dims;
  for (const SweepAxis& a : sweep_axes()) {  // the table's order, whatever the file's
    const auto axis = space.optional(a.key);
    if (!axis) continue;
    if (const std::string problem = axis_needs(a.key, base); !problem.empty())
      axis->fail(problem, "or leave this axis out");
    dims.push_back(read_dimension(a.key, *axis));
  }
  check_values(path, dims, base);

  std::mt19937_64 random(seed);
  std::vector<uint64_t> shift(dims.size(), 0);  // sobol's digital shift, one per dimension
  std::optional<boost::random::sobol> sobol;
  if (sampler == Sampler::sobol) {
    for (uint64_t& s : shift) s = random();
    sobol.emplace(dims.size());
  }
  std::vector<json> out;
  out.reserve(count);
  for (size_t t = 0; t < count; ++t) {
    json values = json::object();
    for (size_t d = 0; d < dims.size(); ++d)
      // Sobol's sequence starts at the origin, which Boost's engine leaves out: trial 0 takes it.
      values[dims[d].axis] =
          value_at(dims[d], unit(sobol ? ((t == 0 ? 0 : (*sobol)()) ^ shift[d]) : random()));
    out.push_back(std::move(values));
  }
  return out;
}

}  // namespace mf
