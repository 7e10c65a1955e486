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
#include "kernels/pack.h"
#include "target/target.h"

namespace mf::MF_TARGET {

// The work fused into gemm's launch besides C = op(A)·op(B) (bias and output_of: at most one).
struct GemmFused {
  const int* rows = nullptr;       // A's stored rows gathered by index: stored row i is rows[i] of A's
                                     // memory (a batch read straight from the data set)
  const float* bias = nullptr;       // C = act(C + bias(N)): a layer's forward
  const float* output_of = nullptr;  // C = C ⊙ act'(Y), Y(M,N) = output_of: a layer's input gradient
                                     // through the activation of the layer below, from its output
  Activation act = Activation::linear;
  float* col_sums = nullptr;         // also col_sums(N) = 1ᵀ·op(B): a layer's bias gradient
};

// A pack's products: `count` of them, member z's operands at member(p, z, stride) (kernels/pack.h),
// with bias at B's stride and output_of and col_sums at C's.
struct GemmStrides {
  int count = 1;
  int64_t a = 0, b = 0, c = 0, rows = 0;  // bytes between the members' A, B, C and row indices
  const StepState* step = nullptr;  // a training step's, at C's stride: rows start at its first_row
};

// Split-K's scratch (kernels/gemm_plan.h): device memory of `floats` floats for the partial products,
// and the SM count the plan is made for. None (the default): every product runs unsplit.
struct GemmWorkspace {
  float* data = nullptr;
  int64_t floats = 0;  // gemm_workspace_floats(sms) is enough for every plan
  int sms = 0;
};

// gemm.cu: C(M,N) = op(A)·op(B) with op(A) (M,K), op(B) (K,N), and the fused work; A is stored (K,M)
// when trans_a, B (N,K) when trans_b, not both. With a workspace, the launch follows gemm_plan: with
// S > 1 splits, S blocks per output tile write their K range's partials to the workspace, then a
// second launch adds them in the order s = 0..S-1 and applies the fused work (deterministic: no
// atomics). The same workspace may serve every product on one stream, not two streams at once.
void gemm(const float* A, const float* B, float* C, int M, int K, int N, bool trans_a, bool trans_b,
          const GemmFused& fused, const GemmStrides& pack, cudaStream_t stream, const GemmWorkspace& work = {});

// activation.cu: every buffer at pack.stride.
void activation_backward(const float* Y, const float* dY, float* dZ, int64_t count, Activation act,
                         const Pack& pack, cudaStream_t stream);
void bias_activation(float* Y, const float* bias, int m, int n, Activation act, const Pack& pack,
                     cudaStream_t stream);

// bias_grad.cu: db(n) = column sums of dZ(m,n), rows added in a fixed order: the cuBLAS path's (the
// tiled path folds it into the weight-gradient product's launch).
void bias_grad(const float* dZ, float* db, int m, int n, const Pack& pack, cudaStream_t stream);

// loss.cu: one thread per row (loss_row.h); target at pack.data_stride, the rest at pack.stride.
void loss(Loss loss, const float* out, const float* target, float* d_out, float* row_loss, float* row_correct,
          int m, int n, const Pack& pack, cudaStream_t stream);

// loss.cu: sparse categorical cross-entropy from probabilities(m,n) (a library softmax's output);
// d_out may alias probabilities.
void crossentropy_from_probabilities(const float* probabilities, const float* target, float* d_out,
                                     float* row_loss, float* row_correct, int m, int n, const Pack& pack,
                                     cudaStream_t stream);

// reduce.cu: totals[0] += Σ row_loss, totals[1] += Σ row_correct; one block per member, a fixed tree:
// deterministic. With pack.step and pack.counts_step, counts the training step.
void accumulate(const float* row_loss, const float* row_correct, int m, double* totals, const Pack& pack,
                cudaStream_t stream);

// loss.cu: loss(), then accumulate(): in one launch for a batch of at most 256 rows (the same
// additions, in the same order), else in two. With rows (at pack.rows_stride), target is the
// data set's targets and the batch's are the data set's rows rows[first_row(pack, z)..+m) (read by
// index: the batch's targets need no gather).
void loss_and_accumulate(Loss loss, const float* out, const float* target, float* d_out, float* row_loss,
                         float* row_correct, int m, int n, double* totals, const int* rows,
                         const Pack& pack, cudaStream_t stream);

// optimizer.cu: one launch over the members' flat parameter buffers of n floats each, each with its
// own settings; then (with pack.step) each member's first_row moves past its batch of batch_rows.
// Adam takes its step count from pack.step (std::invalid_argument without).
void adam(float* w, const float* g, float* m, float* v, int64_t n, const MemberSettings* settings, int batch_rows,
          const Pack& pack, cudaStream_t stream);
void sgd(float* w, const float* g, float* velocity, int64_t n, const MemberSettings* settings, int batch_rows,
         const Pack& pack, cudaStream_t stream);

// batch.cu: order at pack.rows_stride, shuffled with each member's seed; gather's src is the data set
// (shared), its rows order[first_row(pack, z)..+m), its dst at pack.data_stride.
void shuffle(int* order, int n, const MemberSettings* settings, int epoch, const Pack& pack, cudaStream_t stream);
void gather(const float* src, int cols, const int* order, int m, float* dst, const Pack& pack, cudaStream_t stream);

// fault.cu: a write to address 0 on `stream`, a real device fault on purpose (Backend::inject_fault).
void illegal_write(cudaStream_t stream);

}  // namespace mf::MF_TARGET
