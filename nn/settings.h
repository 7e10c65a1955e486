#pragma once
// What a spec's model is to its kernels: the settings each pack member's kernels read
// (kernels/member_settings.h, kernels/layer_math.h), as Keras rounds them (kernels/optimizer_math.h
// says which are float32(x) and which float32(1 - x) from x in double), and the shape its optimizer
// step has (kernels/param_tensors.h).
#include <vector>

#include "kernels/layer_math.h"
#include "kernels/member_settings.h"
#include "kernels/param_tensors.h"
#include "nn/spec.h"

namespace mf {

MemberSettings member_settings(const ModelSpec& spec);
// One entry per layer of the spec.
std::vector<LayerSettings> layer_settings(const ModelSpec& spec);
Schedule schedule_settings(const ScheduleSpec& schedule);

// The optimizer's state slots per parameter, by their names in a memory plan, in slot order: those
// its traits keep (kernels/optimizer_math.h), then amsgrad's, momentum's and centered's (Adam 2, 3
// with amsgrad; SGD 1 with momentum; RMSprop 1 plus 1 with momentum plus 1 centered).
std::vector<const char*> optimizer_slots(const OptimizerSpec& optimizer);
// Whether the optimizer keeps a momentum slot (SGD and RMSprop with momentum > 0).
bool momentum_slot(const OptimizerSpec& optimizer);

// The spec's trainable tensors in the flat parameter buffer, layer by layer in Keras's order
// (Dense: kernel (in, out), then bias; BatchNormalization: gamma, then beta), with their blocks.
std::vector<ParamTensor> param_tensors(const ModelSpec& spec);
// Whether any Dense layer has a kernel or bias regularizer (the step then writes penalty partials).
bool weight_regularized(const ModelSpec& spec);

}  // namespace mf
