#pragma once
// Weights files: the layer shapes, then every parameter in layer order, so a
// round trip is exact and a file that does not match a spec is refused.
//
//   "MFW1", u32 layers, per layer {u32 in, u32 out, u32 activation}, u64 count, count x f32
//   (each layer's kernel (in, out) row-major, then its bias), written as they lie in memory: in the
//   host's byte order, with no conversion (little-endian on x86-64 and AArch64), so a file reads
//   back on a machine of the same byte order.
#include <string>

#include "nn/model.h"

namespace mf {

// A model's weights, or those of one member of a pack, to `path` (`-`: standard output). Throws
// SystemError naming the path and the OS's reason when it cannot be written (runtime/output_file.h).
void save_weights(Model& model, const std::string& path, int member = 0);
// Throws UserError naming the file and the first difference from the model's spec.
void load_weights(Model& model, const std::string& path, int member = 0);

}  // namespace mf
