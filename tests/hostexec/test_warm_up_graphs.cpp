// The warm-up (PackFit::warm_up) makes a fit's step graphs before the fit starts: under host
// execution, which counts the graphs it instantiates, a warmed fit instantiates none of its own, and a
// cold one instantiates them in its first epoch (the first step of each batch size: on a GPU, capture
// and instantiation that would be timed as that step).
#include <gtest/gtest.h>

#include "backends/cuda/cuda_backend.h"
#include "data/dataset.h"
#include "nn/fit.h"
#include "target/target.h"

namespace mf {
namespace {

// 330 rows with a validation split of 0.25: 247 training rows, 7 batches of 32 and a last of 23.
ModelSpec classifier() {
  ModelSpec spec;
  spec.name = "classifier";
  spec.input = 20;
  spec.layers = {{24, Activation::relu}, {4, Activation::softmax}};
  spec.loss = Loss::sparse_categorical_crossentropy;
  spec.fit = {2, 32, 0.25f, true};
  spec.memory.limit_bytes = 1 << 20;
  return spec;
}

// The graphs instantiated by the warm-up (none when cold) and by the fit after it.
std::pair<size_t, size_t> graphs_made(bool warm_up) {
  auto backend = hostexec::make_cuda_backend({});
  const DataSplit data = make_synthetic("teacher:rows=330,classes=4");
  DeviceData resident(*backend, data.train);
  Model model(classifier(), *backend);
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
  EXPECT_EQ(graphs_made(true), std::make_pair(size_t(2), size_t(0)));  // one per batch size: 32 and 23 rows
  EXPECT_EQ(graphs_made(false), std::make_pair(size_t(0), size_t(2)));
}

}  // namespace
}  // namespace mf
