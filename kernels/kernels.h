#pragma once
// The hand-written kernels' launchers, from which the CUDA backend
// (backends/cuda/cuda_backend.cpp) builds the operations of backends/backend.h. Each
// is compiled for the GPU (mf::gpu) and for host execution (mf::hostexec); all
// pointers are device memory, every launch goes on `stream`. Shapes as in
// backends/backend.h; the CPU references are the *_cpu.h files beside these. Every launch serves a
// whole pack (kernels/pack.h), its members along grid.y (grid.z for gemm); shapes are a member's.
#include <cstdint>

#include "kernels/element_math.h"
#include "kernels/gemm_plan.h"
#include "kernels/layer_math.h"
#include "kernels/loss_row.h"
#include "kernels/member_settings.h"
#include "kernels/pack.h"
#include "kernels/param_tensors.h"
#include "target/target.h"

namespace mf::MF_TARGET {

// The work fused into gemm's launch besides C = op(A)·op(B): a layer's forward epilogue (bias,
// activation, the pre-activation kept), a layer's input gradient through the activation below, and
// the bias gradient's column sums. A forward's or a backward's, never both.
struct GemmFused {
  const int* rows = nullptr;    // A's stored rows gathered by index: stored row i is rows[i] of A's
                                // memory (a batch read straight from the data set)
  const float* bias = nullptr;  // forward: C = act(C + bias(N)); null: no bias
  Activation act = Activation::linear;
  float* pre_activation = nullptr;  // forward: also Z(M,N) = C + bias, before the activation
  Through through = {};       // backward: C = C through the layer below (its y and z are (M,N))
  float* col_sums = nullptr;  // also col_sums(N) = 1ᵀ·op(B): a layer's bias gradient
};

// A pack's products: `count` of them, member z's operands at member(p, z, stride) (kernels/pack.h),
// with bias at B's stride and pre_activation, through's buffers and col_sums at C's.
struct GemmStrides {
  int count = 1;
  int64_t a = 0, b = 0, c = 0, rows = 0;  // bytes between the members' A, B, C and row indices
  const StepState* step = nullptr;        // a training step's, at C's stride: rows start at its
                                          // first_row, and a stopped member's products are skipped
};

// Split-K's scratch (kernels/gemm_plan.h): device memory of `floats` floats for the partial
// products, and the SM count the plan is made for. None (the default): every product runs unsplit.
struct GemmWorkspace {
  float* data = nullptr;
  int64_t floats = 0;  // gemm_workspace_floats(sms) is enough for every plan
  int sms = 0;
};

// gemm.cu: C(M,N) = op(A)·op(B) with op(A) (M,K), op(B) (K,N), and the fused work; A is stored
// (K,M) when trans_a, B (N,K) when trans_b, not both. With a workspace, the launch follows
// gemm_plan: with S > 1 splits, S blocks per output tile write their K range's partials to the
// workspace, then a second launch adds them in the order s = 0..S-1 and applies the fused work
// (deterministic: no atomics). The same workspace may serve every product on one stream, not two
// streams at once.
void gemm(const float* A, const float* B, float* C, int M, int K, int N, bool trans_a, bool trans_b,
          const GemmFused& fused, const GemmStrides& pack, cudaStream_t stream,
          const GemmWorkspace& work = {});

// activation.cu: a forward's input X at pack.data_stride (the data's, for a first layer), every
// other buffer at pack.stride.
void activation_forward(const float* X, float* Y, int64_t count, Activation act, const Pack& pack,
                        cudaStream_t stream);
void activation_backward(const float* dY, float* dX, int64_t count, const Through& own,
                         const Through& below, const Pack& pack, cudaStream_t stream);
// Y(m,n) = act(Y + bias(n)) (bias null: none), and Z = Y + bias where Z is given: the epilogue for
// products computed by cuBLAS.
void bias_activation(float* Y, const float* bias, float* Z, int m, int n, Activation act,
                     const Pack& pack, cudaStream_t stream);

// bias_grad.cu: db(n) = column sums of dZ(m,n), rows added in a fixed order: the cuBLAS path's (the
// tiled path folds it into the weight-gradient product's launch).
void bias_grad(const float* dZ, float* db, int m, int n, const Pack& pack, cudaStream_t stream);

// dropout.cu: Backend::dropout_forward and dropout_backward; X at pack.data_stride, the rest at
// pack.stride.
void dropout_forward(const float* X, float* Y, int m, int n, int layer,
                     const MemberSettings* settings, const LayerSettings* layers, const Pack& pack,
                     cudaStream_t stream);
void dropout_backward(const float* dY, float* dX, int m, int n, int layer,
                      const MemberSettings* settings, const LayerSettings* layers,
                      const Through& below, const Pack& pack, cudaStream_t stream);

// batch_norm.cu: Backend::batch_norm_forward and batch_norm_backward, a block per 32 columns of a
// member, the rows' sums in a fixed order; X at pack.data_stride, the rest at pack.stride.
void batch_norm_forward(const float* X, float* Y, int m, int n, const BatchNormBuffers& bn,
                        const LayerSettings* layers, bool training, const Pack& pack,
                        cudaStream_t stream);
void batch_norm_backward(const float* X, const float* dY, float* dX, int m, int n,
                         const BatchNormBuffers& bn, const Through& below, const Pack& pack,
                         cudaStream_t stream);

// regularizers.cu: Backend::activity_penalty, activity_backward and add_penalty.
void activity_penalty(const float* Y, int m, int n, int layer, const LayerSettings* layers,
                      double* partials, int blocks, const Pack& pack, cudaStream_t stream);
void activity_backward(const float* dY, float* dX, int m, int n, int layer,
                       const LayerSettings* layers, const Through& own, const Pack& pack,
                       cudaStream_t stream);
void add_penalty(const double* weight_partials, int weight_blocks, const double* activity_partials,
                 int activity_blocks, int m, double* totals, const Pack& pack, cudaStream_t stream);

// loss.cu: one thread per row (loss_row.h); target at pack.data_stride, the rest at pack.stride.
void loss(const LossShape& shape, const float* out, const float* target, float* d_out,
          float* values, int m, int n, const MemberSettings* settings, const Pack& pack,
          cudaStream_t stream);

// loss.cu: sparse categorical cross-entropy from probabilities(m,n) (a library softmax's output);
// d_out may alias probabilities.
void crossentropy_from_probabilities(const LossShape& shape, const float* probabilities,
                                     const float* target, float* d_out, float* values, int m, int n,
                                     const Pack& pack, cudaStream_t stream);

// reduce.cu: totals[v] += Σ values(., v), v < count; one block per member, a fixed tree:
// deterministic. With pack.step and pack.counts_step, counts the training step.
void accumulate(const float* values, int count, int m, double* totals, const Pack& pack,
                cudaStream_t stream);

// reduce.cu: bins[c] += the rows r < m whose values(r, column) is c, c < bin_count (a histogram of
// the rows' codes: AUC's buckets, kernels/loss_row.h); one block per member, each thread counting
// the rows of its own bins: deterministic, no atomics.
void count_codes(const float* values, int count, int column, int m, double* bins, int bin_count,
                 const Pack& pack, cudaStream_t stream);

// loss.cu: loss(), then accumulate(): in one launch for a batch of at most 256 rows (the same
// additions, in the same order), else in two. With rows (at pack.rows_stride), target is the
// data set's targets and the batch's are the data set's rows rows[first_row(pack, z)..+m) (read by
// index: the batch's targets need no gather).
void loss_and_accumulate(const LossShape& shape, const float* out, const float* target,
                         float* d_out, float* values, int m, int n, double* totals,
                         const MemberSettings* settings, const int* rows, const Pack& pack,
                         cudaStream_t stream);

// optimizer.cu: Backend::optimizer_step, gradient_norms and weight_penalty, each block on
// kParamBlock elements of one tensor (kernels/param_tensors.h), the members along grid.y.
void optimizer_step(const OptimizerStep& step, const Pack& pack, cudaStream_t stream);
void gradient_norms(const OptimizerStep& step, const Pack& pack, cudaStream_t stream);
void weight_penalty(const OptimizerStep& step, const Pack& pack, cudaStream_t stream);

// batch.cu: order at pack.rows_stride, shuffled with each member's seed; gather's src is the data
// set (shared), its rows order[first_row(pack, z)..+m), its dst at pack.data_stride.
void shuffle(int* order, int n, const MemberSettings* settings, int epoch, const Pack& pack,
             cudaStream_t stream);
void gather(const float* src, int cols, const int* order, int m, float* dst, const Pack& pack,
            cudaStream_t stream);

// fault.cu: a write to address 0 on `stream`, a real device fault on purpose
// (Backend::inject_fault).
void illegal_write(cudaStream_t stream);

}  // namespace mf::MF_TARGET
