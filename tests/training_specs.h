#pragma once
// The small models the training tests train: one definition each, so that a test that says "the
// classifier" means the same model everywhere.
#include <cstdint>
#include <string>
#include <vector>

#include "nn/spec.h"

namespace mf::test {

// 20 features -> `layers` (by default Dense(24, relu) -> Dense(4, softmax)), sparse categorical
// cross-entropy, Adam; 2 epochs of batch 32 with a validation split of 0.25 (330 rows: 247 training
// rows, 7 batches of 32 and a last of 23), shuffled; a 1 MiB memory limit.
inline ModelSpec classifier(uint64_t seed, float learning_rate,
                            std::vector<LayerSpec> layers = {{24, Activation::relu},
                                                             {4, Activation::softmax}}) {
  ModelSpec spec;
  spec.name = "member-" + std::to_string(seed);
  spec.input = 20;
  spec.layers = std::move(layers);
  spec.loss = Loss::sparse_categorical_crossentropy;
  spec.optimizer.learning_rate = learning_rate;
  spec.fit = {2, 32, 0.25f, true};
  spec.seed = seed;
  spec.memory.limit_bytes = 1 << 20;
  return spec;
}

// The tiny model of examples/tiny-sweep.json: Dense(64, relu) -> Dense(1, sigmoid), binary
// cross-entropy, 2 epochs of batch 64 (here without the example's validation split).
inline ModelSpec tiny(uint64_t seed, float learning_rate) {
  ModelSpec spec =
      classifier(seed, learning_rate, {{64, Activation::relu}, {1, Activation::sigmoid}});
  spec.loss = Loss::binary_crossentropy;
  spec.fit = {2, 64, 0.f, true};
  return spec;
}

}  // namespace mf::test
