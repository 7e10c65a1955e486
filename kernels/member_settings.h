#pragma once
// One pack member's settings as the kernels read them: one entry per member, in the model's own
// memory, so that one launch steps every member with its own seed, optimizer and loss settings
// (its layers' settings are beside it, kernels/layer_math.h's LayerSettings).
#include <cstdint>

#include "kernels/loss_row.h"
#include "kernels/optimizer_math.h"

namespace mf {

struct MemberSettings {
  uint64_t seed = 0;  // of the epoch shuffle (permute_index) and of dropout's masks (dropout_key)
  OptimizerSettings optimizer;
  LossSettings loss;
};

}  // namespace mf
