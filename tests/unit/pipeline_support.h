#pragma once
// What the input pipeline's tests (nn/input_pipeline.h) share: rows to prepare batches from, a
// shuffled order, a spec whose preparation costs a known time, and a fake device.
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "nn/spec.h"
#include "runtime/rng.h"
#include "tests/training_specs.h"

namespace mf::test {

// `rows` rows of `features` uniform values (x), each with its class, row % 4 (y).
struct Data {
  std::vector<float> x, y;
  int64_t rows;
};
inline Data random_rows(int64_t rows, int features) {
  Data d{std::vector<float>(size_t(rows) * features), std::vector<float>(size_t(rows)), rows};
  Rng rng(3);
  for (float& v : d.x) v = rng.uniform();
  for (size_t i = 0; i < d.y.size(); ++i) d.y[i] = float(i % 4);
  return d;
}

// A permutation of the rows 0..rows-1 drawn from `seed`.
inline std::vector<int> shuffled(int64_t rows, uint64_t seed) {
  std::vector<int> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(uint32_t(i))]);
  return order;
}

// HostWork of `micros` a sample, nothing else: a pipeline whose preparation costs a known time.
inline ModelSpec host_work(double micros, PipelineSpec pipeline) {
  ModelSpec spec = test::classifier(1, 0.01f);
  spec.preprocessing = Preprocessing::parse(
      nlohmann::json::array({{{"type", "HostWork"}, {"microseconds_per_sample", micros}}}),
      std::nullopt, spec.input, "test");
  spec.pipeline = pipeline;
  return spec;
}

// A device of which the pipeline uses only the host buffers and the fences: every other call is a
// logic error. A test derives from it and makes the fences it needs (fence()): uploads that finish
// when the test says so, or that fail.
class UploadsOnlyDevice : public Backend {
 public:
  std::string name() const override { return "uploads-only"; }
  std::string device() const override { return "a test's"; }
  Upstream& upstream() override { throw std::logic_error("unused"); }
  void to_device(void*, const void*, size_t) override { throw std::logic_error("unused"); }
  void to_host(void*, const void*, size_t) override { throw std::logic_error("unused"); }
  void zero(void*, size_t) override { throw std::logic_error("unused"); }
  void to_host_strided(void*, size_t, const void*, size_t, size_t, size_t) override {
    throw std::logic_error("unused");
  }
  void zero_strided(void*, size_t, size_t, size_t) override { throw std::logic_error("unused"); }
  void synchronize() override {}
  void mark() override {}
  std::vector<double> take_marks() override { return {}; }
  std::string fault() override { return ""; }
  void inject_fault() override { throw std::logic_error("unused"); }
  void dense_forward(const float*, const float*, const float*, float*, float*, int, int, int,
                     Activation, const int*, const Pack&) override {
    throw std::logic_error("unused");
  }
  void dense_backward_input(const float*, const float*, float*, int, int, int, const Through&,
                            const Pack&) override {
    throw std::logic_error("unused");
  }
  void dense_backward_params(const float*, const float*, float*, float*, int, int, int, const int*,
                             const Pack&) override {
    throw std::logic_error("unused");
  }
  void activation_forward(const float*, float*, int64_t, Activation, const Pack&) override {
    throw std::logic_error("unused");
  }
  void activation_backward(const float*, float*, int64_t, const Through&, const Through&,
                           const Pack&) override {
    throw std::logic_error("unused");
  }
  void dropout_forward(const float*, float*, int, int, int, const MemberSettings*,
                       const LayerSettings*, const Pack&) override {
    throw std::logic_error("unused");
  }
  void dropout_backward(const float*, float*, int, int, int, const MemberSettings*,
                        const LayerSettings*, const Through&, const Pack&) override {
    throw std::logic_error("unused");
  }
  void batch_norm_forward(const float*, float*, int, int, const BatchNormBuffers&,
                          const LayerSettings*, bool, const Pack&) override {
    throw std::logic_error("unused");
  }
  void batch_norm_backward(const float*, const float*, float*, int, int, const BatchNormBuffers&,
                           const Through&, const Pack&) override {
    throw std::logic_error("unused");
  }
  void activity_penalty(const float*, int, int, int, const LayerSettings*, double*, int,
                        const Pack&) override {
    throw std::logic_error("unused");
  }
  void activity_backward(const float*, float*, int, int, int, const LayerSettings*, const Through&,
                         const Pack&) override {
    throw std::logic_error("unused");
  }
  void loss(const LossShape&, const float*, const float*, float*, float*, int, int,
            const MemberSettings*, const Pack&) override {
    throw std::logic_error("unused");
  }
  void accumulate(const float*, int, int, double*, const Pack&) override {
    throw std::logic_error("unused");
  }
  void count_codes(const float*, int, int, int, double*, int, const Pack&) override {
    throw std::logic_error("unused");
  }
  void add_penalty(const double*, int, const double*, int, int, double*, const Pack&) override {
    throw std::logic_error("unused");
  }
  void optimizer_step(const OptimizerStep&, const Pack&) override {
    throw std::logic_error("unused");
  }
  void gradient_norms(const OptimizerStep&, const Pack&) override {
    throw std::logic_error("unused");
  }
  void weight_penalty(const OptimizerStep&, const Pack&) override {
    throw std::logic_error("unused");
  }
  void shuffle(int*, int, const MemberSettings*, int, const Pack&) override {
    throw std::logic_error("unused");
  }
  void gather(const float*, int, const int*, int, float*, const Pack&) override {
    throw std::logic_error("unused");
  }
};

}  // namespace mf::test
