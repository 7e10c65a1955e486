#include "nn/sweep_search.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <random>

#include <boost/random/sobol.hpp>

#include "nn/sweep_axes.h"
#include "runtime/error.h"
#include "runtime/near_miss.h"

namespace mf {
namespace {

using nlohmann::json;

// The most trials a search draws: a sweep's bound on its models (nn/sweep.cpp).
constexpr int64_t kMaxTrials = int64_t(1) << 20;

enum class Draw { uniform, log_uniform, int_uniform, int_log_uniform, choice };
struct Distribution {
  const char* name;
  Draw draw;
};
constexpr Distribution kDistributions[] = {{"uniform", Draw::uniform},
                                           {"log_uniform", Draw::log_uniform},
                                           {"int_uniform", Draw::int_uniform},
                                           {"int_log_uniform", Draw::int_log_uniform},
                                           {"choice", Draw::choice}};
constexpr const char* kSearchKeys[] = {"trials", "sampler", "seed", "space"};
constexpr const char* kSamplers[] = {"random", "sobol"};

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

[[noreturn]] void fail(const std::string& path, const std::string& where, const std::string& problem,
                       const std::string& allowed) {
  throw UserError(path + ": " + where + ": " + problem + "; " + allowed);
}

template <size_t N>
std::vector<std::string> names_of(const char* const (&names)[N]) {
  return {std::begin(names), std::end(names)};
}
std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}
std::string unknown(const char* what, const std::string& word, const std::vector<std::string>& known) {
  const std::string meant = near_miss(word, known);
  return "unknown " + std::string(what) + " \"" + one_line(word) + "\"" +
         (meant.empty() ? "" : " (did you mean \"" + meant + "\"?)");
}

// One axis of the space, checked: how it draws and from what.
struct Dimension {
  std::string axis;
  Draw draw;
  double low = 0, high = 0;  // the range (ints: inclusive)
  json choices;              // choice's values
};

Dimension read_dimension(const std::string& path, const std::string& axis, const json& spec) {
  const std::string where = "search.space." + one_line(axis);
  const std::string allowed = "expected an object of one distribution: " + allowed_for(axis);
  if (!spec.is_object() || spec.size() != 1) fail(path, where, "got " + shown_escaped(spec), allowed);
  const std::string name = spec.begin().key();
  const json& range = spec.begin().value();
  std::vector<std::string> known;
  for (const Distribution& d : kDistributions) known.push_back(d.name);
  const auto it = std::find_if(std::begin(kDistributions), std::end(kDistributions),
                               [&](const Distribution& d) { return name == d.name; });
  if (it == std::end(kDistributions)) fail(path, where, unknown("distribution", name, known), allowed);
  Dimension d{axis, it->draw, 0, 0, json()};
  const std::string at = where + "." + name;
  if (d.draw == Draw::choice) {
    if (!range.is_array() || range.empty()) fail(path, at, "got " + shown_escaped(range), "expected a non-empty array of values");
    if (axis == "hidden")
      for (const json& v : range)
        if (!v.is_array()) fail(path, at, "got " + shown_escaped(v), "expected arrays of the hidden layers' widths, like [100, 10]");
    d.choices = range;
    return d;
  }
  const bool ints = d.draw == Draw::int_uniform || d.draw == Draw::int_log_uniform;
  if (ints ? !takes_ints(axis) : !takes_floats(axis))
    fail(path, at, "the " + axis + " axis cannot draw from " + name, "allowed: " + allowed_for(axis));
  const bool log = d.draw == Draw::log_uniform || d.draw == Draw::int_log_uniform;
  const auto bad = [&](const std::string& problem) {
    fail(path, at, problem,
         std::string("expected [low, high] with low ") + (ints ? "<=" : "<") + " high" +
             (ints ? ", both integers" : "") + (log ? (ints ? ", low >= 1" : ", low > 0") : ""));
  };
  if (!range.is_array() || range.size() != 2 || !range[0].is_number() || !range[1].is_number())
    bad("got " + shown_escaped(range));
  d.low = range[0].get<double>(), d.high = range[1].get<double>();
  if (ints && (!range[0].is_number_integer() || !range[1].is_number_integer())) bad("got " + shown_escaped(range));
  if (!std::isfinite(d.low) || !std::isfinite(d.high) || (ints ? d.low > d.high : d.low >= d.high))
    bad("got " + shown_escaped(range));
  if (log && (ints ? d.low < 1 : d.low <= 0)) bad("got " + shown_escaped(range));
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
      return int64_t(std::min(d.high, std::floor(std::exp(std::log(d.low) + u * std::log((d.high + 1) / d.low)))));
    case Draw::uniform:
    case Draw::log_uniform: {
      const double x = d.draw == Draw::uniform ? d.low + u * (d.high - d.low)
                                               : std::exp(std::log(d.low) + u * std::log(d.high / d.low));
      // The float32 the spec keeps, written in its shortest form (0.00123, not 0.0012300000526).
      char buffer[32];
      const auto end = std::to_chars(buffer, buffer + sizeof buffer, float(x));
      return std::stod(std::string(buffer, end.ptr));
    }
  }
  return nullptr;
}

// A 64-bit draw as a double in [0, 1): its top 53 bits.
double unit(uint64_t bits) { return double(bits >> 11) * 0x1.0p-53; }

}  // namespace

std::vector<json> draw_trials(const std::string& path, const json& search, const json& base) {
  if (!search.is_object()) fail(path, "search", "got " + shown_escaped(search), "expected an object with trials and space");
  for (const auto& [key, value] : search.items())
    if (std::find(std::begin(kSearchKeys), std::end(kSearchKeys), key) == std::end(kSearchKeys))
      fail(path, "search." + one_line(key), unknown("key", key, names_of(kSearchKeys)),
           "allowed keys: " + listed(names_of(kSearchKeys)));
  const auto trials = search.find("trials");
  if (trials == search.end() || !trials->is_number_integer() || trials->get<int64_t>() < 1 ||
      trials->get<int64_t>() > kMaxTrials)
    fail(path, "search.trials", trials == search.end() ? "missing" : "got " + shown_escaped(*trials),
         "expected the number of trials to draw, 1 to " + std::to_string(kMaxTrials));
  std::string sampler = "random";
  if (const auto s = search.find("sampler"); s != search.end()) {
    const bool known = s->is_string() && std::find(std::begin(kSamplers), std::end(kSamplers), s->get<std::string>()) !=
                                             std::end(kSamplers);
    if (!known)
      fail(path, "search.sampler",
           s->is_string() ? unknown("sampler", s->get<std::string>(), names_of(kSamplers)) : "got " + shown_escaped(*s),
           "allowed: random, sobol");
    sampler = s->get<std::string>();
  }
  uint64_t seed = 0;
  if (const auto s = search.find("seed"); s != search.end()) {
    if (!s->is_number_unsigned()) fail(path, "search.seed", "got " + shown_escaped(*s), "expected an integer >= 0");
    seed = s->get<uint64_t>();
  }
  const auto space = search.find("space");
  if (space == search.end() || !space->is_object() || space->empty())
    fail(path, "search.space", space == search.end() ? "missing" : "got " + shown_escaped(*space),
         "expected an object of one or more axes: " + sweep_axis_list());
  std::vector<std::string> axis_names;
  for (const SweepAxis& a : sweep_axes()) axis_names.push_back(a.key);
  for (const auto& [key, value] : space->items())
    if (!find_sweep_axis(key))
      fail(path, "search.space." + one_line(key), unknown("axis", key, axis_names), "allowed axes: " + sweep_axis_list());
  std::vector<Dimension> dims;
  for (const SweepAxis& a : sweep_axes()) {  // the table's order, whatever the file's
    if (!space->contains(a.key)) continue;
    if (const std::string problem = axis_needs(a.key, base); !problem.empty())
      fail(path, "search.space." + std::string(a.key), problem, "or leave this axis out");
    dims.push_back(read_dimension(path, a.key, space->at(a.key)));
  }

  const size_t count = trials->get<size_t>();
  std::mt19937_64 random(seed);
  std::vector<uint64_t> shift(dims.size(), 0);  // sobol's digital shift, one per dimension
  std::optional<boost::random::sobol> sobol;
  if (sampler == "sobol") {
    for (uint64_t& s : shift) s = random();
    sobol.emplace(dims.size());
  }
  std::vector<json> out;
  out.reserve(count);
  for (size_t t = 0; t < count; ++t) {
    json values = json::object();
    for (size_t d = 0; d < dims.size(); ++d)
      // Sobol's sequence starts at the origin, which Boost's engine leaves out: trial 0 takes it.
      values[dims[d].axis] = value_at(dims[d], unit(sobol ? ((t == 0 ? 0 : (*sobol)()) ^ shift[d]) : random()));
    out.push_back(std::move(values));
  }
  return out;
}

}  // namespace mf
