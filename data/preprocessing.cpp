// Preprocessing: reading a spec's list (with the spec's Field, runtime/json_field.h), writing it
// back, and running it over a batch of samples.
#include "data/preprocessing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/preprocessing_ops.h"
#include "runtime/error.h"
#include "runtime/json_field.h"
#include "runtime/names.h"
#include "runtime/near_miss.h"
#include "runtime/rng.h"

namespace mf {

using preprocessing::Operation;

struct Preprocessing::Plan {
  std::vector<Operation> operations;
  int64_t width = 0;
  ImageShape shape;  // all zero for a flat input

  bool operator==(const Plan&) const = default;
};

namespace {

using nlohmann::json;
using namespace preprocessing;

constexpr Named<FlipMode> kFlipModes[] = {
    {"horizontal", FlipMode::horizontal},
    {"vertical", FlipMode::vertical},
    {"horizontal_and_vertical", FlipMode::horizontal_and_vertical}};
constexpr Named<FillMode> kFillModes[] = {{"reflect", FillMode::reflect},
                                          {"constant", FillMode::constant},
                                          {"nearest", FillMode::nearest},
                                          {"wrap", FillMode::wrap}};
constexpr Named<Interpolation> kInterpolations[] = {{"bilinear", Interpolation::bilinear},
                                                    {"nearest", Interpolation::nearest}};

// A synthetic cost of at most a tenth of a second a sample: a whole Fashion-MNIST epoch of it is
// already 100 minutes of CPU time.
constexpr double kMaxHostWorkMicroseconds = 1e5;
// The random stream of preprocessing, forked from the model's seed apart from its weights' (0).
constexpr uint64_t kPreprocessingStream = 0x70726570;  // "prep"
// An image's sides and channels: the spec's widths stop at 2^20, and so the product cannot
// overflow.
constexpr int64_t kMaxImageSize = int64_t(1) << 20;

// A number for describe(): as short as it reads, 0.1 and not 0.100000001.
std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

// Translation's and zoom's factors (Keras's _set_factor): a number f for [-|f|, |f|], or a pair
// [lower, upper] in either order; each in [-1, 1].
Range factor_range(const Field& field) {
  const std::string allowed = "a number in [-1, 1] or a pair [lower, upper] of numbers in [-1, 1]";
  if (field.value().is_array()) {
    const auto [a, b] = field.pair_in(-1, 1, allowed);
    return {float(std::min(a, b)), float(std::max(a, b))};
  }
  const float f = float(std::abs(field.number_in(-1, 1, allowed)));
  return {-f, f};
}

// RandomContrast's factor: a number f in [0, 1] for [1 - f, 1 + f]; a pair [lower, upper] (sorted)
// in [-1, 1] for [1 - lower, 1 + upper], which must not be empty.
Range contrast_range(const Field& field) {
  const std::string allowed =
      "a number in [0, 1], or a pair [lower, upper] of numbers in [-1, 1] with lower + upper >= 0 (the contrast is drawn from [1 - lower, 1 + upper])";
  if (!field.value().is_array()) {
    const float f = float(field.number_in(0, 1, allowed));
    return {f, f};
  }
  const auto [a, b] = field.pair_in(-1, 1, allowed);
  if (a + b < 0) field.wrong(allowed);
  return {float(std::min(a, b)), float(std::max(a, b))};
}

Sampling parse_sampling(const Field& field) {
  Sampling s;
  if (const auto mode = field.optional("fill_mode")) s.fill_mode = mode->one_of(kFillModes);
  if (const auto value = field.optional("fill_value")) {
    // Checked as a float: 1e39 is finite as a double, infinite as the float it becomes.
    s.fill_value = float(value->number_in(-HUGE_VAL, HUGE_VAL, "a finite number"));
    if (!std::isfinite(s.fill_value)) value->wrong("a finite number");
  }
  if (const auto interpolation = field.optional("interpolation"))
    s.interpolation = interpolation->one_of(kInterpolations);
  return s;
}

Operation parse_flip(const Field& field) {
  RandomFlip op;
  if (const auto mode = field.optional("mode")) op.mode = mode->one_of(kFlipModes);
  return op;
}

Operation parse_translation(const Field& field) {
  return RandomTranslation{factor_range(field.at("height_factor")),
                           factor_range(field.at("width_factor")), parse_sampling(field)};
}

Operation parse_zoom(const Field& field) {
  RandomZoom op{factor_range(field.at("height_factor")), std::nullopt, parse_sampling(field)};
  // null, as Keras's None: the height's draw.
  if (const auto width = field.optional("width_factor"); width && !width->value().is_null())
    op.width = factor_range(*width);
  return op;
}

Operation parse_contrast(const Field& field) {
  RandomContrast op{contrast_range(field.at("factor"))};
  if (const auto range = field.optional("value_range")) {
    const std::string allowed = "a pair [low, high] of finite numbers with low < high";
    const auto [low, high] = range->pair_in(-HUGE_VAL, HUGE_VAL, allowed);
    op.low = float(low);
    op.high = float(high);
    if (!(op.low < op.high) || !std::isfinite(op.low) || !std::isfinite(op.high))
      range->wrong(allowed);
  }
  return op;
}

Operation parse_noise(const Field& field) {
  return GaussianNoise{float(field.at("stddev").number_in(0, 1, "a number in [0, 1]"))};
}

Operation parse_host_work(const Field& field) {
  const std::string allowed =
      "a number of microseconds in (0, " + number(kMaxHostWorkMicroseconds) + "]";
  return HostWork{
      field.at("microseconds_per_sample").number_in(0, kMaxHostWorkMicroseconds, allowed, true)};
}

constexpr const char* kFlipKeys[] = {"type", "mode"};
constexpr const char* kSamplingKeys[] = {"type",      "height_factor", "width_factor",
                                         "fill_mode", "fill_value",    "interpolation"};
constexpr const char* kContrastKeys[] = {"type", "factor", "value_range"};
constexpr const char* kNoiseKeys[] = {"type", "stddev"};
constexpr const char* kHostWorkKeys[] = {"type", "microseconds_per_sample"};

// Each operation's type: its name, its keys in the order describe() prints them, whether it reads
// the sample as an image, and its reader.
struct OperationType {
  const char* name;
  Keys keys;
  bool image;
  Operation (*parse)(const Field&);
};
const OperationType kTypes[] = {{"RandomFlip", kFlipKeys, true, parse_flip},
                                {"RandomTranslation", kSamplingKeys, true, parse_translation},
                                {"RandomZoom", kSamplingKeys, true, parse_zoom},
                                {"RandomContrast", kContrastKeys, true, parse_contrast},
                                {"GaussianNoise", kNoiseKeys, false, parse_noise},
                                {"HostWork", kHostWorkKeys, false, parse_host_work}};

std::string type_names() {
  return joined(kTypes, [](const OperationType& type) { return std::string(type.name); });
}

const OperationType* find_type(std::string_view name) {
  for (const OperationType& type : kTypes)
    if (name == type.name) return &type;
  return nullptr;
}

const OperationType& parse_type(const Field& field) {
  if (!field.value().is_string()) field.wrong("one of " + type_names());
  const std::string& name = field.value().get_ref<const std::string&>();
  if (const OperationType* type = find_type(name)) return *type;
  std::vector<std::string> known;
  for (const OperationType& type : kTypes) known.push_back(type.name);
  const std::string meant = near_miss(name, known);
  field.fail("unknown type " + shown(field.value()) +
                 (meant.empty() ? "" : " (did you mean \"" + meant + "\"?)"),
             "expected one of " + type_names());
}

Operation parse_operation(const Field& field, bool image_input) {
  field.require_object("an operation, {\"type\": NAME, ...} with NAME one of " + type_names());
  const OperationType& type = parse_type(field.at("type"));
  if (field.value().contains("seed"))  // Keras's layers take one; here the draws follow the model's
    field.at("seed").fail(
        "not an operation's parameter here",
        "every operation draws from the model's \"seed\", the epoch and the sample's position: set the model's seed, and remove this one");
  field.allow_keys(type.keys);
  if (type.image && !image_input)
    field.fail(
        std::string(type.name) + " needs an image, but the input has no input_shape",
        "give the spec an \"input_shape\": [height, width, channels] or use a flat operation (GaussianNoise, HostWork)");
  return type.parse(field);
}

// ---- Back to JSON -----------------------------------------------------------------------------

json to_json(const Range& r) { return json::array({r.lower, r.upper}); }

void add_sampling(json& j, const Sampling& s) {
  j["fill_mode"] = name_of(kFillModes, s.fill_mode);
  j["fill_value"] = s.fill_value;
  j["interpolation"] = name_of(kInterpolations, s.interpolation);
}

json to_json(const RandomFlip& op) {
  return {{"type", "RandomFlip"}, {"mode", name_of(kFlipModes, op.mode)}};
}
json to_json(const RandomTranslation& op) {
  json j = {{"type", "RandomTranslation"},
            {"height_factor", to_json(op.height)},
            {"width_factor", to_json(op.width)}};
  add_sampling(j, op.sampling);
  return j;
}
json to_json(const RandomZoom& op) {
  json j = {{"type", "RandomZoom"},
            {"height_factor", to_json(op.height)},
            {"width_factor", op.width ? to_json(*op.width) : json(nullptr)}};
  add_sampling(j, op.sampling);
  return j;
}
json to_json(const RandomContrast& op) {
  return {{"type", "RandomContrast"},
          {"factor", to_json(op.factor)},
          {"value_range", json::array({op.low, op.high})}};
}
json to_json(const GaussianNoise& op) { return {{"type", "GaussianNoise"}, {"stddev", op.stddev}}; }
json to_json(const HostWork& op) {
  return {{"type", "HostWork"}, {"microseconds_per_sample", op.microseconds}};
}

json to_json(const Operation& op) {
  return std::visit([](const auto& o) { return to_json(o); }, op);
}

// A parameter's value for describe(): numbers short, names bare.
std::string described(const json& value) {
  if (value.is_number()) return number(value.get<double>());
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_array()) return value.dump();
  return "[" + joined(value, [](const json& x) { return described(x); }) + "]";
}

// "RandomFlip(mode=horizontal)": the parameters in the order of the type's keys.
std::string describe(const Operation& op) {
  const json j = to_json(op);
  const OperationType& type = *find_type(j["type"].get<std::string>());
  const std::string parameters = joined(type.keys.subspan(1), [&j](const char* key) {
    return std::string(key) + "=" + described(j[key]);
  });
  return std::string(type.name) + "(" + parameters + ")";
}

// The generator of one sample's draws for one operation. Each key is mixed in by a fork and a draw
// (SplitMix64's output function), not by fork alone, whose XOR would let keys trade places:
// (epoch 1, position 2) would draw what (epoch 2, position 1) draws.
Rng draws_for(uint64_t seed, int epoch, int64_t position, size_t operation) {
  uint64_t state = Rng(seed).fork(kPreprocessingStream).next();
  for (const uint64_t key : {uint64_t(int64_t(epoch)), uint64_t(position), uint64_t(operation)})
    state = Rng(state).fork(key).next();
  return Rng(state);
}

}  // namespace

ImageShape parse_image_shape(const nlohmann::json& value, const std::string& source,
                             const std::string& path) {
  const Field field(value, source, path);
  const std::string allowed = "[height, width, channels], three positive integers up to " +
                              std::to_string(kMaxImageSize) + " (channels last, as Keras)";
  if (!value.is_array() || value.size() != 3) field.wrong(allowed);
  int sizes[3];
  for (size_t i = 0; i < 3; ++i) {
    const auto n = integer_in(value[i], 1, kMaxImageSize);
    if (!n) field.wrong(allowed);
    sizes[i] = int(*n);
  }
  return {sizes[0], sizes[1], sizes[2]};
}

void check_image_shape(const ImageShape& shape, int64_t input, const std::string& source,
                       const std::string& path) {
  if (shape.values() == input) return;
  const std::string dims = std::to_string(shape.height) + ", " + std::to_string(shape.width) +
                           ", " + std::to_string(shape.channels);
  throw UserError(source + ": " + path + ": [" + dims + "] holds " +
                  std::to_string(shape.values()) + " values, but input is " +
                  std::to_string(input) +
                  "; expected a shape whose height x width x channels is the input's width");
}

Preprocessing Preprocessing::parse(const nlohmann::json& list,
                                   const std::optional<ImageShape>& shape, int64_t input,
                                   const std::string& source, const std::string& path) {
  if (input < 1)
    throw std::invalid_argument("preprocessing: an input of " + std::to_string(input) + " values");
  if (shape) check_image_shape(*shape, input, source);
  const Field field(list, source, path);
  if (!list.is_array()) field.wrong("an array of operations, each {\"type\": NAME, ...}");
  Plan plan{{}, input, shape.value_or(ImageShape{})};
  for (size_t i = 0; i < list.size(); ++i)
    plan.operations.push_back(parse_operation(field.item(i), shape.has_value()));
  if (plan.operations.empty()) return {};
  return Preprocessing(std::make_shared<const Plan>(std::move(plan)));
}

std::string Preprocessing::describe() const {
  if (!plan_) return "none";
  return joined(plan_->operations, [](const Operation& op) { return mf::describe(op); });
}

nlohmann::json Preprocessing::to_json() const {
  json list = json::array();
  if (plan_)
    for (const Operation& op : plan_->operations) list.push_back(mf::to_json(op));
  return list;
}

bool Preprocessing::operator==(const Preprocessing& other) const {
  return plan_ == other.plan_ || (plan_ && other.plan_ && *plan_ == *other.plan_);
}

void Preprocessing::apply(const float* rows, float* out, int64_t count, int64_t width,
                          uint64_t seed, int epoch, int64_t first_position) const {
  if (count < 0 || first_position < 0 || width < 0)
    throw std::invalid_argument("preprocessing: " + std::to_string(count) + " rows of " +
                                std::to_string(width) + " values from position " +
                                std::to_string(first_position));
  if (plan_ && width != plan_->width)
    throw std::invalid_argument("preprocessing: rows of " + std::to_string(width) +
                                " values for an input of " + std::to_string(plan_->width));
  if (out != rows) std::copy(rows, rows + count * width, out);
  if (!plan_) return;
  std::vector<float> scratch(static_cast<size_t>(width));
  for (int64_t i = 0; i < count; ++i) {
    const Sample sample{out + i * width, scratch.data(), width, plan_->shape};
    for (size_t k = 0; k < plan_->operations.size(); ++k) {
      Rng rng = draws_for(seed, epoch, first_position + i, k);
      std::visit([&](const auto& op) { preprocessing::apply(op, sample, rng); },
                 plan_->operations[k]);
    }
  }
}

}  // namespace mf
