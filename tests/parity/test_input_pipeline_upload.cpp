// The input pipeline on the CUDA backend's code path, on the device under test (host execution, or
// a GPU): batches prepared on the host from the data set's kept host rows into page-locked slots
// and uploaded asynchronously on the model's stream before each step (and before each replayed step
// graph), each slot rewritten only after its upload's fence. The same numbers for any pipeline, and
// the cpu backend's to float32 rounding.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_backend.h"
#include "data/dataset.h"
#include "nn/fit.h"
#include "tests/fit_numbers.h"
#include "tests/parity/device_under_test.h"
#include "tests/parity/test_sizes.h"
#include "tests/training_specs.h"

namespace mf::test {
namespace {

ModelSpec augmented(PipelineSpec pipeline) {
  ModelSpec spec = test::classifier(3, 0.01f);
  spec.input_shape = ImageShape{4, 5, 1};
  spec.preprocessing = Preprocessing::parse(
      nlohmann::json::parse(
          R"([{"type": "RandomFlip"}, {"type": "GaussianNoise", "stddev": 0.2}])"),
      spec.input_shape, spec.input, "test");
  spec.pipeline = pipeline;
  return spec;
}

std::vector<double> trained(Backend& backend, PipelineSpec pipeline, bool graphs) {
  const DataSplit split = make_synthetic(teacher(4) + ",features=20,seed=2");
  DeviceData data(backend, split.train, /*keep_host_rows=*/true);
  Model model(augmented(pipeline), backend);
  FitOptions options;
  options.graphs = graphs;
  return test::fit_numbers(model, data, options, true);
}

class InputPipelineUpload : public DeviceTest {};

TEST_F(InputPipelineUpload, TheCudaPathGivesTheSameNumbersOnAnyPipelineAndTheCpusToRounding) {
  Backend& backend = *device_;
  const std::vector<double> reference = trained(backend, {1, 1}, false);
  EXPECT_EQ(trained(backend, {3, 4}, false), reference);
  EXPECT_EQ(trained(backend, {2, 2}, true), reference)
      << "the upload precedes the replayed step graph";
  CpuBackend cpu;
  const std::vector<double> on_cpu = trained(cpu, {1, 2}, false);
  ASSERT_EQ(on_cpu.size(), reference.size());
  for (size_t i = 0; i < on_cpu.size(); ++i)
    EXPECT_NEAR(on_cpu[i], reference[i], 1e-4 * (1 + std::fabs(on_cpu[i]))) << i;
}

}  // namespace
}  // namespace mf::test
