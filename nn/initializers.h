#pragma once
// Keras 3's initializers (keras/src/initializers/), drawn on the host from the model's seed so that
// every backend starts from the same numbers. The variance-scaling ones (glorot, he, lecun) take
// scale / fan, with fan = fan_in, fan_out or their mean (Glorot & Bengio, 2010; He et al., 2015;
// LeCun et al., 1998): uniform in +-sqrt(3 scale / fan), or normal truncated at two standard
// deviations (redrawn past them, as tf.random.truncated_normal) with stddev
// sqrt(scale / fan) / 0.87962566103423978, the stddev of a standard normal truncated at 2.
#include <cstdint>

#include "nn/spec.h"
#include "runtime/rng.h"

namespace mf {

// values(count) of a tensor of a layer with `fan_in` inputs and `fan_out` outputs.
void initialize(const Initializer& init, float* values, int64_t count, int fan_in, int fan_out,
                Rng& rng);

}  // namespace mf
