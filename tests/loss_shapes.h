#pragma once
// The loss pass's shape for a loss with its default metric (its own accuracy, as a spec without
// "metrics" has it), for the tests that call a backend's loss pass directly: a row's values are
// then its loss and its accuracy.
#include "kernels/loss_row.h"

namespace mf::test {

inline LossShape default_loss_shape(Loss loss, int outputs) {
  switch (loss) {
    case Loss::sparse_categorical_crossentropy:
      return {loss, false, 1, {1, {Metric::sparse_categorical_accuracy}}};
    case Loss::categorical_crossentropy:
      return {loss, false, outputs, {1, {Metric::categorical_accuracy}}};
    case Loss::binary_crossentropy:
      return {loss, false, outputs, {1, {Metric::binary_accuracy}}};
    default:
      return {loss, false, outputs, {}};
  }
}

}  // namespace mf::test
