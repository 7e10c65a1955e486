#pragma once
// What a fit trained to, as one list to compare runs by: each epoch's loss, accuracy, val_loss and
// val_accuracy, then every weight. A fit that does not end ok fails the test. With `pipelined`,
// each epoch must have recorded its input pipeline's work.
#include <vector>

#include <gtest/gtest.h>

#include "nn/fit.h"

namespace mf::test {

inline std::vector<double> fit_numbers(Model& model, const DeviceData& data,
                                       const FitOptions& options, bool pipelined) {
  const FitResult result = fit(model, data, options);
  EXPECT_EQ(result.status, FitStatus::ok) << result.why;
  std::vector<double> numbers;
  for (const EpochMetrics& e : result.epochs) {
    numbers.insert(numbers.end(), {e.loss, e.accuracy, e.val_loss, e.val_accuracy});
    if (pipelined) {
      EXPECT_GT(e.input_busy_s, 0) << "the workers' time is recorded";
    }
    EXPECT_GE(e.input_wait_s, 0);
  }
  for (float w : model.get_all_params()) numbers.push_back(w);
  return numbers;
}

}  // namespace mf::test
