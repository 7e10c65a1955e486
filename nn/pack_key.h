#pragma once
// What the members of one pack share (nn/model.h's Model of several specs), field by field, so
// that a plan can say why two models train in different packs.
#include <string>
#include <vector>

#include "nn/spec.h"

namespace mf {

// One thing the members of a pack share: its place in the spec ("fit.batch_size",
// "layers[1].units"; "targets" is the number of target columns the loss reads) and its value in
// words ("64", "relu", "set").
struct PackField {
  std::string name, value;
};

// The fields two members of a pack must have equal, in the spec's order: the input width, the loss
// and its targets, whether rows are weighted (the members read one data set, weighted alike), the
// optimizer's kind, state slots and clipping, the layers' structure (their count, then each
// layer's type, units, activation, bias, which tensors carry a regularizer, batch normalization's
// center and scale), the metrics, batch size, epochs, validation split, shuffle, the pipeline's
// workers and prefetch, whether there is preprocessing (the members share one input pipeline),
// memory mode and the "device" "sms" (a pack runs on one green context). Two specs with the same
// fields have the same plan and the same launches; they may differ in every value the kernels read
// per member: name, seed, initializers, learning rate and schedule, the optimizer's other
// settings, dropout rates, regularizer factors, batch normalization's momentum and epsilon, label
// smoothing, huber's delta, callbacks, memory limit and "device" "sm_share" (processes mode's
// alone).
std::vector<PackField> pack_fields(const ModelSpec& spec);

// pack_fields as one string: equal for two specs exactly when every field is.
std::string pack_key(const ModelSpec& spec);

// Why `spec` cannot join a pack of `member`: each of pack_fields in which they differ, as
// "layers[0].units 64, not 256; fit.batch_size 77, not 64" (spec's value first), up to a
// difference in the layers' count or a layer's type (the fields after it are not alike); "" when
// they share a pack_key.
std::string pack_difference(const ModelSpec& spec, const ModelSpec& member);

}  // namespace mf
