#pragma once
// Weights files: the layers' shapes, then every weight in Keras's get_weights() order, so a round
// trip is exact and a file that does not match a spec is refused.
//
//   "MFW2", u32 layers, per layer {u32 kind, u32 in, u32 out, u32 activation, u32 flags},
//   u64 count, count x f32
//
// One entry per layer of the spec (LayerKind's order: Dense 0, Dropout 1, BatchNormalization 2,
// Activation 3, Flatten 4); flags: 1 a Dense's bias, 2 a BatchNormalization's beta (center), 4 its
// gamma (scale). The weights: per layer, a Dense's kernel (in, out) row-major and its bias, a
// BatchNormalization's gamma, beta, moving mean and moving variance. Written as they lie in memory:
// in the host's byte order, with no conversion (little-endian on x86-64 and AArch64), so a file
// reads back on a machine of the same byte order. Files of the first form, "MFW1", u32 layers, per
// layer {u32 in, u32 out, u32 activation}, u64 count, f32s (Dense layers with biases only), are
// read too.
#include <string>

#include "nn/model.h"

namespace mf {

// A model's weights, or those of one member of a pack, to `path` (`-`: standard output). Throws
// SystemError naming the path and the OS's reason when it cannot be written
// (runtime/output_file.h).
void save_weights(Model& model, const std::string& path, int member = 0);
// Throws UserError naming the file and the first difference from the model's spec.
void load_weights(Model& model, const std::string& path, int member = 0);

}  // namespace mf
