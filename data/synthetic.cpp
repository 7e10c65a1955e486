// Generated data sets, for examples and tests. The spec is "KIND" or "KIND:key=value,...":
//   binary      x uniform in [0,1), y a random 0/1 label (nothing to learn; the classic Keras toy
//   example) regression  x uniform in [0,1), y uniform in [0,1) (nothing to learn either) teacher
//   x uniform in [-1,1), y the class that a fixed random network
//               x -> Dense(32, tanh) -> Dense(classes) scores highest: a task a student network can
//               learn
// The test set has rows/4 rows (at least 1) from the same generator on another random stream.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/dataset.h"
#include "runtime/rng.h"
#include "runtime/error.h"

namespace mf {
namespace {

constexpr int kTeacherHidden = 32;
// Upper bounds that keep every size within int and the teacher's weights within a few hundred MiB.
constexpr int64_t kMaxRows = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxFeatures = int64_t(1) << 20;
constexpr int64_t kMaxClasses = int64_t(1) << 16;
// rows * features of the train set
constexpr int64_t kMaxElements = std::numeric_limits<int32_t>::max();
constexpr char kAllowed[] =
    "synthetic:KIND[:key=value,...] with KIND binary, regression or teacher and keys rows, features, classes (teacher only), seed";

// Random streams forked from the seed, one per purpose.
enum Stream : uint64_t { kTrainStream = 0, kTestStream = 1, kTeacherStream = 2 };

enum class Kind { binary, regression, teacher };

struct SyntheticSpec {
  Kind kind = Kind::binary;
  std::string kind_name;
  int64_t rows = 0;
  int features = 20;
  int classes = 0;
  uint64_t seed = 1234;
};

[[noreturn]] void fail(const std::string& spec, const std::string& what) {
  throw UserError("synthetic:" + spec + ": " + what + "; use " + kAllowed);
}

template <class T>
bool parse_integer(std::string_view text, T& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

// rows, features and classes: a positive integer up to `max`.
int64_t positive_value(const std::string& spec, std::string_view key, std::string_view text,
                       int64_t max) {
  int64_t value = 0;
  if (!parse_integer(text, value) || value <= 0 || value > max)
    fail(spec, "key '" + std::string(key) + "' has value '" + std::string(text) +
                   "', which is not an integer in 1.." + std::to_string(max));
  return value;
}

void set_key(SyntheticSpec& s, const std::string& spec, std::string_view key,
             std::string_view text) {
  if (key == "rows")
    s.rows = positive_value(spec, key, text, kMaxRows);
  else if (key == "features")
    s.features = int(positive_value(spec, key, text, kMaxFeatures));
  else if (key == "classes" && s.kind == Kind::teacher)
    s.classes = int(positive_value(spec, key, text, kMaxClasses));
  else if (key == "seed") {
    if (!parse_integer(text, s.seed))
      fail(spec,
           "key 'seed' has value '" + std::string(text) + "', which is not a non-negative integer");
  } else if (key == "classes")
    fail(spec, "key 'classes' applies only to teacher");
  else
    fail(spec, "unknown key '" + std::string(key) + "'");
}

SyntheticSpec parse_spec(const std::string& spec) {
  SyntheticSpec s;
  const size_t colon = spec.find(':');
  s.kind_name = spec.substr(0, colon);
  if (s.kind_name == "binary")
    s.kind = Kind::binary;
  else if (s.kind_name == "regression")
    s.kind = Kind::regression;
  else if (s.kind_name == "teacher")
    s.kind = Kind::teacher;
  else
    fail(spec, "unknown kind '" + s.kind_name + "'");
  s.rows = s.kind == Kind::teacher ? 4096 : 1024;
  s.classes = s.kind == Kind::regression ? 0 : 2;

  std::vector<std::string> seen;
  for (size_t start = colon; start != std::string::npos;) {
    const size_t end = spec.find(',', start + 1);
    const std::string_view item = std::string_view(spec).substr(start + 1, end - start - 1);
    start = end;
    const size_t equals = item.find('=');
    if (equals == std::string_view::npos)
      fail(spec, std::string("'").append(item).append("' is not key=value"));
    const std::string key(item.substr(0, equals));
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      fail(spec, "key '" + key + "' appears twice");
    seen.push_back(key);
    set_key(s, spec, key, item.substr(equals + 1));
  }
  if (s.kind == Kind::teacher && s.classes < 2)
    fail(spec, "key 'classes' is " + std::to_string(s.classes) +
                   ", but a teacher needs at least 2 classes");
  if (s.rows > kMaxElements / s.features)
    fail(spec, std::to_string(s.rows) + " rows of " + std::to_string(s.features) +
                   " features are more than the " + std::to_string(kMaxElements) +
                   " values allowed");
  return s;
}

// The teacher network: weights (features, 32) and (32, classes), no biases, so that its scores are
// an odd function of x; x is symmetric about 0, so for 2 classes either label is equally likely.
// Weights are uniform with a scale that gives the pre-activations unit variance (x has variance
// 1/3).
class Teacher {
 public:
  Teacher(int features, int classes, Rng rng) : features_(features), classes_(classes) {
    const float a1 = 3.0f / std::sqrt(float(features)),
                a2 = 3.0f / std::sqrt(float(kTeacherHidden));
    w1_.resize(size_t(features) * kTeacherHidden);
    w2_.resize(size_t(kTeacherHidden) * classes);
    for (float& w : w1_) w = rng.uniform(-a1, a1);
    for (float& w : w2_) w = rng.uniform(-a2, a2);
  }

  // x: (features) -> the index of the highest score.
  int label(const float* x) const {
    float hidden[kTeacherHidden] = {};
    for (int i = 0; i < features_; ++i)
      for (int j = 0; j < kTeacherHidden; ++j)
        hidden[j] += x[i] * w1_[size_t(i) * kTeacherHidden + j];
    int best = 0;
    float best_score = -std::numeric_limits<float>::infinity();
    for (int k = 0; k < classes_; ++k) {
      float score = 0;
      for (int j = 0; j < kTeacherHidden; ++j)
        score += std::tanh(hidden[j]) * w2_[size_t(j) * classes_ + k];
      if (score > best_score) {
        best = k;
        best_score = score;
      }
    }
    return best;
  }

 private:
  int features_, classes_;
  std::vector<float> w1_, w2_;
};

// teacher: present exactly for the teacher kind.
Dataset generate(const SyntheticSpec& s, int64_t rows, Rng rng,
                 const std::optional<Teacher>& teacher) {
  Dataset data;
  data.rows = rows;
  data.features = s.features;
  data.target_cols = 1;
  data.classes = s.classes;
  data.x.resize(size_t(rows) * s.features);
  data.y.resize(size_t(rows));
  const bool centred = s.kind == Kind::teacher;
  for (int64_t r = 0; r < rows; ++r) {
    float* x = data.x.data() + r * s.features;
    for (int i = 0; i < s.features; ++i) x[i] = centred ? rng.uniform(-1.0f, 1.0f) : rng.uniform();
    switch (s.kind) {
      case Kind::binary:
        data.y[r] = float(rng.below(2));
        break;
      case Kind::regression:
        data.y[r] = rng.uniform();
        break;
      case Kind::teacher:
        data.y[r] = float(teacher->label(x));
        break;
    }
  }
  return data;
}

int64_t test_rows(const SyntheticSpec& s) { return std::max<int64_t>(s.rows / 4, 1); }

// The spec with every default filled in, so that the description says exactly what was generated.
std::string canonical(const SyntheticSpec& s) {
  std::string text = "synthetic:" + s.kind_name + ":rows=" + std::to_string(s.rows) +
                     ",features=" + std::to_string(s.features);
  if (s.kind == Kind::teacher) text += ",classes=" + std::to_string(s.classes);
  return text + ",seed=" + std::to_string(s.seed);
}

}  // namespace

DataSplit make_synthetic(const std::string& spec) {
  const SyntheticSpec s = parse_spec(spec);
  const Rng base(s.seed);
  std::optional<Teacher> teacher;
  if (s.kind == Kind::teacher) teacher.emplace(s.features, s.classes, base.fork(kTeacherStream));
  DataSplit split;
  split.train = generate(s, s.rows, base.fork(kTrainStream), teacher);
  split.test = generate(s, test_rows(s), base.fork(kTestStream), teacher);
  split.description = canonical(s) + " (" + std::to_string(split.train.rows) + " train, " +
                      std::to_string(split.test->rows) + " test)";
  return split;
}

size_t synthetic_bytes(const std::string& spec) {
  const SyntheticSpec s = parse_spec(spec);
  // x and one label a row
  return size_t(s.rows + test_rows(s)) * size_t(s.features + 1) * sizeof(float);
}

}  // namespace mf
