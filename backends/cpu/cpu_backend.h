#pragma once
// The reference backend: plain C++ on host memory, OpenBLAS and libxsmm for the products.
// Runs everywhere; every other backend is tested against it.
//
// Threads (backends/cpu/cpu_threads.h): a team of the calling thread and helpers of its own. A
// pack's members are spread over it, each member's operation computed whole by one thread, as it
// is for a model alone on one thread; a model alone has an operation spread over it where its
// estimated time (backends/cpu/cpu_cost.h, measured on this machine) pays for a second thread.
// The pieces an operation is cut into never depend on the threads or the estimate: a product is
// always computed in the tiles its shape gives (product_tiles), one after another on one thread,
// and an element-wise piece gives the whole's bits. So a model's numbers are the same on any
// number of threads, and the same alone as in a pack.
//
// A recorded step (capture) is the CPU's counterpart of a CUDA graph: the step's calls, kept once
// and replayed member by member, so that a member's whole step runs from its own cache and a pack's
// members run on the threads at once, one start of the threads a step.
#include <algorithm>
#include <csignal>
#include <functional>
#include <memory>
#include <vector>

#include "backends/backend.h"
#include "backends/cpu/cpu_cost.h"
#include "backends/cpu/cpu_threads.h"

namespace mf {

class CpuBackend final : public Backend {
 public:
  // `threads` (at least 1; a std::invalid_argument otherwise): the host threads one model's or one
  // pack's operations use. Flushes denormals on the calling thread, which runs every operation with
  // the threads it starts (runtime/float_mode.h), and loads OpenBLAS (a UserError when it cannot be
  // loaded, or when the address space has no room for the threads' work buffers). With more than
  // one thread, the first backend of the process measures the cost model (about 1 ms).
  explicit CpuBackend(int threads = 1);
  std::string name() const override { return "cpu"; }
  std::string device() const override;
  int host_threads() const override { return threads_; }
  // The operations (or a pack's runs of them) this backend has spread over its team so far.
  int64_t spread_runs() const { return team_->shared_runs(); }
  void reserve_host_threads(int threads) override;
  bool host_addressable() const override { return true; }
  Upstream& upstream() override { return upstream_; }

  void to_device(void* dst, const void* src, size_t bytes) override;
  void to_host(void* dst, const void* src, size_t bytes) override;
  void zero(void* dst, size_t bytes) override;
  void to_host_strided(void* dst, size_t dst_pitch, const void* src, size_t pitch, size_t width,
                       size_t rows) override;
  void zero_strided(void* dst, size_t pitch, size_t width, size_t rows) override;
  void synchronize() override {}
  void mark() override;
  std::string fault() override {
    return "";
  }  // a CPU fault ends the process; nothing is left to report
  void inject_fault() override { std::raise(SIGSEGV); }
  std::vector<double> take_marks() override;

  // Records the step's pack operations (every call it makes must be one); a launch replays them.
  bool has_graphs() const override { return true; }
  std::unique_ptr<StepGraph> capture(const std::function<void()>& step) override;
  void run_together(const std::function<void()>& calls) override { capture(calls)->launch(); }
  bool runs_members_apart() const override { return true; }
  bool warm_up_pays() const override { return false; }

  // rows must be null: the cpu backend's products (OpenBLAS) read a gathered batch.
  void dense_forward(const float* X, const float* W, const float* b, float* Y, float* Z, int m,
                     int k, int n, Activation act, const int* rows = nullptr,
                     const Pack& pack = {}) override;
  void dense_backward_input(const float* dZ, const float* W, float* dX, int m, int k, int n,
                            const Through& below = {}, const Pack& pack = {}) override;
  void dense_backward_params(const float* X, const float* dZ, float* dW, float* db, int m, int k,
                             int n, const int* rows = nullptr, const Pack& pack = {}) override;
  void activation_forward(const float* X, float* Y, int64_t count, Activation act,
                          const Pack& pack = {}) override;
  void activation_backward(const float* dY, float* dX, int64_t count, const Through& own,
                           const Through& below = {}, const Pack& pack = {}) override;
  void dropout_forward(const float* X, float* Y, int m, int n, int layer,
                       const MemberSettings* settings, const LayerSettings* layers,
                       const Pack& pack) override;
  void dropout_backward(const float* dY, float* dX, int m, int n, int layer,
                        const MemberSettings* settings, const LayerSettings* layers,
                        const Through& below, const Pack& pack) override;
  void batch_norm_forward(const float* X, float* Y, int m, int n, const BatchNormBuffers& bn,
                          const LayerSettings* layers, bool training,
                          const Pack& pack = {}) override;
  void batch_norm_backward(const float* X, const float* dY, float* dX, int m, int n,
                           const BatchNormBuffers& bn, const Through& below,
                           const Pack& pack = {}) override;
  void activity_penalty(const float* Y, int m, int n, int layer, const LayerSettings* layers,
                        double* partials, int blocks, const Pack& pack = {}) override;
  void activity_backward(const float* dY, float* dX, int m, int n, int layer,
                         const LayerSettings* layers, const Through& own,
                         const Pack& pack = {}) override;
  void loss(const LossShape& shape, const float* out, const float* target, float* d_out,
            float* values, int m, int n, const MemberSettings* settings,
            const Pack& pack = {}) override;
  void accumulate(const float* values, int count, int m, double* totals,
                  const Pack& pack = {}) override;
  void count_codes(const float* values, int count, int column, int m, double* bins, int bin_count,
                   const Pack& pack = {}) override;
  void add_penalty(const double* weight_partials, int weight_blocks,
                   const double* activity_partials, int activity_blocks, int m, double* totals,
                   const Pack& pack = {}) override;
  void optimizer_step(const OptimizerStep& step, const Pack& pack) override;
  void gradient_norms(const OptimizerStep& step, const Pack& pack) override;
  void weight_penalty(const OptimizerStep& step, const Pack& pack) override;
  void shuffle(int* order, int n, const MemberSettings* settings, int epoch,
               const Pack& pack = {}) override;
  void gather(const float* src, int cols, const int* order, int m, float* dst,
              const Pack& pack = {}) override;

 private:
  // How an operation may be cut. A product's `tiles` are fixed by its shape: on one thread they run
  // one after another, and a team takes them as its parts. An element-wise operation (tiles 0) may
  // be cut into any number of parts, each giving the whole's bits. `seconds`: its estimated time
  // for one member on one thread.
  struct Cut {
    int tiles = 1;
    double seconds = 0;
  };
  // One pack operation: work(z, part) does member z's part `part` (1 of 1: all of it). A member
  // whose step state says it stopped is skipped (kernels/pack.h).
  struct Operation {
    int members = 1;
    Cut cut;
    std::function<void(int member, cpu::Part part)> work;
    const StepState* step = nullptr;
    int64_t stride = 0;
    bool skips(int z) const { return step && member(step, z, stride)->stopped != 0; }
    void whole(int z) const;  // member z's operation on the calling thread: its tiles in turn
  };
  class RecordedStep;
  // Runs pack's operation now, or appends it to the step being recorded.
  void submit(const Pack& pack, Cut cut, std::function<void(int member, cpu::Part part)> work);
  // Whether a model alone's operation is spread over the team when its step spreads: it can be cut
  // and its estimated time is at least kLeastSpread_s.
  bool spreads(const Operation& op) const;
  void run(const Operation& op, bool spread);
  // Runs every operation of `ops`, `times` over, for members [0, members), each member's
  // operations in order on one thread: the members spread over the team where `spread`, else one
  // after another.
  void run_members(const std::vector<Operation>& ops, int members, bool spread, int times);
  // The cut of a product op(A)·op(B) of (rows, cols) outputs over `inner`, its tiles along the
  // columns where `by_columns` (at multiples of 16, its epilogue's vector step), else the rows.
  Cut product_cut(bool trans_a, bool trans_b, int rows, int cols, int inner, bool by_columns) const;
  Cut element_cut(int64_t floats) const;
  // An operation too small or too sequential to cut, over `floats`.
  Cut whole_cut(int64_t floats) const;
  void refuse_while_recording(const char* call) const;

  const int made_with_;  // the threads it was made with
  int threads_;          // those its operations use: made_with_ less those reserved
  std::unique_ptr<cpu::Team> team_;
  const cpu::CostModel* cost_ = nullptr;  // with more than one thread: this process's
  HostUpstream upstream_;
  std::vector<double> marks_;
  std::vector<Operation>* recording_ = nullptr;  // the step capture() is recording, or null
};

}  // namespace mf
