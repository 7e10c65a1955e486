#pragma once
// CPU references of the optimizer step and the passes beside it (kernels/optimizer.cu), over blocks
// [first, last) of one member's step (kernels/param_tensors.h), so that a model alone can split
// them over threads. The member's once-per-step work (finish_member_step) is the caller's, after
// every block.
#include "kernels/param_tensors.h"

namespace mf::cpu {

// The update of every element of the blocks; with s.regularized, each block's penalty partial into
// penalty[block].
void optimizer_blocks(const OptimizerStep& s, const MemberStep& b, double* penalty, int first,
                      int last);
// Each block's sum of squared (regularized) gradients into partials[block].
void norm_partials(const OptimizerStep& s, const MemberStep& b, double* partials, int first,
                   int last);
// Each tensor's norm from its blocks' partials, then the global one: norms(tensor_count + 1).
void finish_norms(const OptimizerStep& s, const double* partials, float* norms);
// Each block's penalty partial of the weights as they are.
void weight_penalty(const OptimizerStep& s, const MemberStep& b, double* penalty, int first,
                    int last);

}  // namespace mf::cpu
