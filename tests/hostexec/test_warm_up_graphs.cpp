// The warm-up (PackFit::warm_up) makes a fit's step graphs before the fit starts: under host
// execution, which counts the graphs it instantiates, a warmed fit instantiates none of its own,
// and a cold one instantiates them in its first epoch (the first step of each batch size: on a GPU,
// capture and instantiation that would be timed as that step).
#include <gtest/gtest.h>

#include "backends/cuda/cuda_backend.h"
#include "data/dataset.h"
#include "nn/fit.h"
#include "target/target.h"
#include "tests/parity/test_sizes.h"
#include "tests/training_specs.h"

namespace mf {
namespace {

// The graphs instantiated by the warm-up (none when cold) and by the fit after it.
std::pair<size_t, size_t> graphs_made(bool warm_up) {
  auto backend = hostexec::make_cuda_backend({});
  const DataSplit data = make_synthetic(test::teacher(4));
  DeviceData resident(*backend, data.train);
  Model model(test::classifier(0, 1e-3f), *backend);
  FitOptions options;
  options.graphs = true;
  PackFit fit(model, resident, options);
  const size_t before = hostexec::graphs_instantiated();
  if (warm_up) fit.warm_up();
  const size_t warmed = hostexec::graphs_instantiated();
  while (!fit.done()) {
    fit.launch_epoch();
    fit.end_epoch();
  }
  return {warmed - before, hostexec::graphs_instantiated() - warmed};
}

TEST(WarmUpGraphs, AWarmedFitReplaysTheGraphsOfItsWarmUpAndMakesNone) {
  // one per batch size: 32 and the last batch's
  EXPECT_EQ(graphs_made(true), std::make_pair(size_t(2), size_t(0)));
  EXPECT_EQ(graphs_made(false), std::make_pair(size_t(0), size_t(2)));
}

}  // namespace
}  // namespace mf
