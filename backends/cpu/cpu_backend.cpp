#include "backends/cpu/cpu_backend.h"

#include "backends/cpu/spread_choice.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "kernels/batch_cpu.h"
#include "kernels/cpu_gemm.h"
#include "kernels/cpu_activation.h"
#include "kernels/dense_cpu.h"
#include "kernels/layers_cpu.h"
#include "kernels/loss_cpu.h"
#include "kernels/openblas.h"
#include "kernels/optimizer_cpu.h"
#include "runtime/clock.h"
#include "runtime/float_mode.h"

namespace mf {

using cpu::Part;
using cpu::piece;
using cpu::Range;

namespace {

// Element-wise parts start at multiples of 64 floats: the vector loops of every CPU width step
// through a part as they step through the whole, so each element gets the same instructions; a
// product's column tiles at multiples of 16, for its epilogue's.
constexpr int64_t kElementGrain = 64, kColumnGrain = 16;
// The parts a team cuts an element-wise operation into, per thread: more than one, so that a helper
// that comes late, or is descheduled, leaves the caller less to wait for.
constexpr int kPartsPerThread = 4;

// Whether a product's output of `rows` x `cols` is cut by columns rather than rows: when it is
// wider than tall (a small batch's), so that each tile reads only its columns' share of the
// weights.
bool by_columns(int rows, int cols) { return cols > rows; }

void refuse_rows(const int* rows) {
  if (rows)
    throw std::logic_error("the cpu backend does not fuse the gather: pass it a gathered batch");
}

}  // namespace

void CpuBackend::Operation::whole(int z) const {
  if (cut.tiles <= 1) return work(z, {});
  for (int t = 0; t < cut.tiles; ++t) work(z, {t, cut.tiles});
}

// The operations of one step, replayed. A pack's members are spread over the team where the
// estimate says it pays (members work on buffers of their own, so a helper costs the caller only
// the work it takes), each member running its whole step (every operation, in order;
// launch_times: all its steps) before the next member's. A model alone runs the operations in
// order on the calling thread for its first kTimedLaunches launches, each operation timed, and
// from then on spreads those whose least time was at least kLeastSpread_s, where that is measured
// to pay on the step's own launches (backends/cpu/spread_choice.h). The times replace the
// estimates, which miss what an operation's data costs where it lies: a gather of random rows from
// a data set in memory, a dropout's hash per element.
class CpuBackend::RecordedStep final : public StepGraph {
 public:
  static constexpr int kTimedLaunches = 2;

  RecordedStep(CpuBackend& backend, std::vector<Operation> ops)
      : backend_(backend), ops_(std::move(ops)) {
    if (ops_.empty()) return;
    members_ = ops_.front().members;
    if (members_ == 1 || backend_.team_->size() == 1) return;
    double seconds = 0;  // a member's step
    for (const Operation& op : ops_) seconds += op.cut.seconds;
    spread_members_ = members_ * seconds >= cpu::kLeastSpread_s;
    // Started now, they sleep until the first launch wakes them, and the kernel then places them
    // on idle cores.
    if (spread_members_) backend_.team_->start();
  }

  void launch() override { launch_times(1); }
  void launch_times(int times) override {
    if (members_ > 1) return backend_.run_members(ops_, members_, spread_members_, times);
    for (int i = 0; i < times; ++i) {
      if (timed_ < kTimedLaunches) {
        time_operations();
      } else if (!measures_) {
        run_alone(false);
      } else {
        const Clock::time_point start = Clock::now();
        run_alone(choice_.spreads());
        choice_.launched(seconds_since(start));
      }
    }
  }

 private:
  void run_alone(bool spread) {
    for (const Operation& op : ops_) backend_.run(op, spread);
  }

  // A launch on the calling thread, each operation timed into its cut (the least of the timed
  // launches); after the last, whether the step has anything to spread.
  void time_operations() {
    for (Operation& op : ops_) {
      const Clock::time_point start = Clock::now();
      backend_.run(op, false);
      const double seconds = seconds_since(start);
      op.cut.seconds = timed_ == 0 ? seconds : std::min(op.cut.seconds, seconds);
    }
    if (++timed_ < kTimedLaunches) return;
    measures_ = std::any_of(ops_.begin(), ops_.end(),
                            [&](const Operation& op) { return backend_.spreads(op); });
    // Started now, they sleep until the first launch that spreads wakes them, and the kernel then
    // places them on idle cores.
    if (measures_) backend_.team_->start();
  }

  CpuBackend& backend_;
  std::vector<Operation> ops_;
  int members_ = 1;
  bool spread_members_ = false;  // a pack's: whether its members are spread over the team
  int timed_ = 0;                // a model alone's launches timed so far
  bool measures_ = false;        // a model alone's: whether its step has anything to spread
  cpu::SpreadChoice choice_;
};

CpuBackend::CpuBackend(int threads) : made_with_(threads), threads_(threads) {
  if (threads < 1)
    throw std::invalid_argument("cpu backend: " + std::to_string(threads) + " threads");
  flush_denormals_on_this_thread();
  // OpenBLAS loaded now, at start-up, not in the first training step
  cpu::require_room_for_threads(threads);
  team_ = std::make_unique<cpu::Team>(threads_);
  if (threads_ > 1) cost_ = &cpu::CostModel::measured();
}

void CpuBackend::reserve_host_threads(int threads) {
  refuse_while_recording("reserve_host_threads");
  threads_ = std::max(1, made_with_ - std::max(0, threads));
  if (threads_ != team_->size()) team_ = std::make_unique<cpu::Team>(threads_);
}

std::string CpuBackend::device() const {
  static const std::string name = [] {  // read once a process: every model's report asks
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line, model = "CPU";
    while (std::getline(cpuinfo, line))
      if (line.rfind("model name", 0) == 0) {
        model = line.substr(line.find(':') + 2);
        break;
      }
    return model + " (" + std::to_string(std::thread::hardware_concurrency()) +
           " hardware threads)";
  }();
  return name;
}

void CpuBackend::refuse_while_recording(const char* call) const {
  if (recording_)
    throw std::logic_error(std::string("cpu backend: ") + call + " inside a recorded step");
}

void CpuBackend::to_device(void* dst, const void* src, size_t bytes) {
  refuse_while_recording("to_device");
  std::memcpy(dst, src, bytes);
}
void CpuBackend::to_host(void* dst, const void* src, size_t bytes) {
  refuse_while_recording("to_host");
  std::memcpy(dst, src, bytes);
}
void CpuBackend::zero(void* dst, size_t bytes) {
  refuse_while_recording("zero");
  std::memset(dst, 0, bytes);
}
void CpuBackend::to_host_strided(void* dst, size_t dst_pitch, const void* src, size_t pitch,
                                 size_t width, size_t rows) {
  refuse_while_recording("to_host_strided");
  for (size_t r = 0; r < rows; ++r)
    std::memcpy(static_cast<char*>(dst) + r * dst_pitch, static_cast<const char*>(src) + r * pitch,
                width);
}
void CpuBackend::zero_strided(void* dst, size_t pitch, size_t width, size_t rows) {
  refuse_while_recording("zero_strided");
  for (size_t r = 0; r < rows; ++r) std::memset(static_cast<char*>(dst) + r * pitch, 0, width);
}
void CpuBackend::mark() {
  refuse_while_recording("mark");
  marks_.push_back(clock_seconds());
}
std::vector<double> CpuBackend::take_marks() { return std::exchange(marks_, {}); }

std::unique_ptr<Backend::StepGraph> CpuBackend::capture(const std::function<void()>& step) {
  if (recording_) throw std::logic_error("cpu backend: a capture inside a capture");
  std::vector<Operation> ops;
  recording_ = &ops;
  try {
    step();
  } catch (...) {
    recording_ = nullptr;
    throw;
  }
  recording_ = nullptr;
  for (const Operation& op : ops)
    if (op.members != ops.front().members)
      throw std::logic_error("cpu backend: a recorded step of packs of " +
                             std::to_string(ops.front().members) + " and " +
                             std::to_string(op.members) + " members");
  return std::make_unique<RecordedStep>(*this, std::move(ops));
}

bool CpuBackend::spreads(const Operation& op) const {
  return team_->size() > 1 && op.cut.tiles != 1 && op.cut.seconds >= cpu::kLeastSpread_s;
}

CpuBackend::Cut CpuBackend::product_cut(bool trans_a, bool trans_b, int rows, int cols, int inner,
                                        bool columns) const {
  const int64_t macs = int64_t(rows) * cols * inner;
  const double seconds = cost_ ? cost_->product(macs) : 0;
  // OpenBLAS's products (kernels/cpu_gemm.h) stay whole: past its small-matrix kernels it takes
  // its callers one at a time (measured: two threads at once gain 0.7-1.0x, libxsmm's 2x), so
  // their tiles would only cost the copies of each call.
  if (!cpu::takes_libxsmm(trans_a, trans_b, rows, cols, inner)) return {1, seconds};
  return {
      columns ? cpu::product_tiles(macs, cols, kColumnGrain) : cpu::product_tiles(macs, rows, 1),
      seconds};
}
CpuBackend::Cut CpuBackend::element_cut(int64_t floats) const {
  return {0, cost_ ? cost_->element(floats) : 0};
}
CpuBackend::Cut CpuBackend::whole_cut(int64_t floats) const {
  return {1, cost_ ? cost_->element(floats) : 0};
}

void CpuBackend::submit(const Pack& pack, Cut cut,
                        std::function<void(int member, cpu::Part part)> work) {
  Operation op{pack.count, cut, std::move(work), pack.step, pack.stride};
  if (recording_) return recording_->push_back(std::move(op));
  // Run once, so not measured: spread where the estimate says it pays.
  if (op.members > 1)
    return run_members({op}, op.members,
                       team_->size() > 1 && op.members * op.cut.seconds >= cpu::kLeastSpread_s, 1);
  run(op, true);
}

// A model alone's operation: where `spread` and it is worth it, its tiles (or, element-wise,
// kPartsPerThread parts a thread) taken by the team; else whole on the calling thread.
void CpuBackend::run(const Operation& op, bool spread) {
  if (op.skips(0)) return;
  if (!spread || !spreads(op)) return op.whole(0);
  const int parts = op.cut.tiles > 0 ? op.cut.tiles : kPartsPerThread * team_->size();
  team_->run(parts, [&](int part) { op.work(0, {part, parts}); });
}

void CpuBackend::run_members(const std::vector<Operation>& ops, int members, bool spread,
                             int times) {
  const auto member_ops = [&](int z) {
    for (int i = 0; i < times; ++i)
      for (const Operation& op : ops)
        if (!op.skips(z)) op.whole(z);
  };
  if (!spread || team_->size() == 1) {
    for (int z = 0; z < members; ++z) member_ops(z);
    return;
  }
  const int parts = std::min(members, cpu::Team::kMostParts);
  team_->run(parts, [&](int part) {
    const Range own = piece(members, {part, parts});
    for (int64_t z = own.begin; z < own.end; ++z) member_ops(int(z));
  });
}

void CpuBackend::dense_forward(const float* X, const float* W, const float* b, float* Y, float* Z,
                               int m, int k, int n, Activation act, const int* rows,
                               const Pack& p) {
  refuse_rows(rows);
  submit(p, product_cut(false, false, m, n, k, by_columns(m, n)), [=](int z, Part part) {
    const float *Xz = member(X, z, p.data_stride), *Wz = member(W, z, p.stride),
                *bz = member(b, z, p.stride);
    float *Yz = member(Y, z, p.stride), *Zz = member(Z, z, p.stride);
    if (by_columns(m, n)) {
      const Range c = piece(n, part, kColumnGrain);
      return cpu::dense_forward_columns(Xz, Wz, bz, Yz, Zz, m, k, n, act, int(c.begin), int(c.end));
    }
    const Range r = piece(m, part);  // rows of X and Y
    if (r.size() > 0)
      cpu::dense_forward(Xz + r.begin * k, Wz, bz, Yz + r.begin * n,
                         Zz ? Zz + r.begin * n : nullptr, int(r.size()), k, n, act);
  });
}
void CpuBackend::dense_backward_input(const float* dZ, const float* W, float* dX, int m, int k,
                                      int n, const Through& below, const Pack& p) {
  submit(p, product_cut(false, true, m, k, n, by_columns(m, k)), [=](int z, Part part) {
    const float *dZz = member(dZ, z, p.stride), *Wz = member(W, z, p.stride);
    float* dXz = member(dX, z, p.stride);
    const Through bz = member_through(below, z, p.stride);
    if (by_columns(m, k)) {
      const Range c = piece(k, part, kColumnGrain);
      return cpu::dense_backward_input_columns(dZz, Wz, dXz, m, k, n, bz, int(c.begin), int(c.end));
    }
    const Range r = piece(m, part);  // rows of dZ and dX
    if (r.size() == 0) return;
    cpu::dense_backward_input(dZz + r.begin * n, Wz, dXz + r.begin * k, int(r.size()), k, n);
    cpu::through_in_place(bz, dXz + r.begin * k, r.begin * k, r.size() * k);
  });
}
void CpuBackend::dense_backward_params(const float* X, const float* dZ, float* dW, float* db, int m,
                                       int k, int n, const int* rows, const Pack& p) {
  refuse_rows(rows);
  submit(p, product_cut(true, false, k, n, m, false), [=](int z, Part part) {  // tiles of dW's rows
    const Range dw_rows = piece(k, part), db_cols = piece(n, part, kColumnGrain);
    cpu::dense_backward_params_part(member(X, z, p.data_stride), member(dZ, z, p.stride),
                                    member(dW, z, p.stride), member(db, z, p.stride), m, k, n,
                                    int(dw_rows.begin), int(dw_rows.end), int(db_cols.begin),
                                    int(db_cols.end));
  });
}
void CpuBackend::activation_forward(const float* X, float* Y, int64_t count, Activation act,
                                    const Pack& p) {
  submit(p, element_cut(count), [=](int z, Part part) {
    const Range r = piece(count, part, kElementGrain);
    cpu::activation_forward(member(X, z, p.data_stride), member(Y, z, p.stride), r.begin, r.end,
                            act);
  });
}
void CpuBackend::activation_backward(const float* dY, float* dX, int64_t count, const Through& own,
                                     const Through& below, const Pack& p) {
  submit(p, element_cut(count), [=](int z, Part part) {
    const Range r = piece(count, part, kElementGrain);
    cpu::activation_backward(member(dY, z, p.stride), member(dX, z, p.stride), r.begin, r.end,
                             member_through(own, z, p.stride), member_through(below, z, p.stride));
  });
}
void CpuBackend::dropout_forward(const float* X, float* Y, int m, int n, int layer,
                                 const MemberSettings* settings, const LayerSettings* layers,
                                 const Pack& p) {
  const int64_t count = int64_t(m) * n;
  submit(p, element_cut(count), [=](int z, Part part) {
    const Range r = piece(count, part, kElementGrain);
    cpu::dropout(member(X, z, p.data_stride), member(Y, z, p.stride), r.begin, r.end,
                 member(layers, z, p.stride)[layer], member(settings, z, p.stride)->seed, layer,
                 steps_before(p, z, false));
  });
}
void CpuBackend::dropout_backward(const float* dY, float* dX, int m, int n, int layer,
                                  const MemberSettings* settings, const LayerSettings* layers,
                                  const Through& below, const Pack& p) {
  const int64_t count = int64_t(m) * n;
  submit(p, element_cut(count), [=](int z, Part part) {
    const Range r = piece(count, part, kElementGrain);
    cpu::dropout(member(dY, z, p.stride), member(dX, z, p.stride), r.begin, r.end,
                 member(layers, z, p.stride)[layer], member(settings, z, p.stride)->seed, layer,
                 steps_before(p, z, true), member_through(below, z, p.stride));
  });
}
void CpuBackend::batch_norm_forward(const float* X, float* Y, int m, int n,
                                    const BatchNormBuffers& bn, const LayerSettings* layers,
                                    bool training, const Pack& p) {
  submit(p, element_cut(int64_t(m) * n), [=](int z, Part part) {
    const Range c = piece(n, part);
    const BatchNormBuffers b = member_buffers(bn, z, p.stride);
    const LayerSettings& s = member(layers, z, p.stride)[bn.layer];
    const float* Xz = member(X, z, p.data_stride);
    float* Yz = member(Y, z, p.stride);
    if (training)
      cpu::batch_norm_train(Xz, Yz, m, n, b, s, int(c.begin), int(c.end));
    else
      cpu::batch_norm_infer(Xz, Yz, m, n, b, s, int(c.begin), int(c.end));
  });
}
void CpuBackend::batch_norm_backward(const float* X, const float* dY, float* dX, int m, int n,
                                     const BatchNormBuffers& bn, const Through& below,
                                     const Pack& p) {
  submit(p, element_cut(int64_t(m) * n), [=](int z, Part part) {
    const Range c = piece(n, part);
    cpu::batch_norm_backward(member(X, z, p.data_stride), member(dY, z, p.stride),
                             member(dX, z, p.stride), m, n, member_buffers(bn, z, p.stride),
                             member_through(below, z, p.stride), int(c.begin), int(c.end));
  });
}
void CpuBackend::activity_penalty(const float* Y, int m, int n, int layer,
                                  const LayerSettings* layers, double* partials, int blocks,
                                  const Pack& p) {
  submit(p, whole_cut(int64_t(m) * n), [=](int z, Part) {
    cpu::activity_penalty(member(Y, z, p.stride), int64_t(m) * n,
                          member(layers, z, p.stride)[layer].activity,
                          member(partials, z, p.stride), blocks);
  });
}
void CpuBackend::activity_backward(const float* dY, float* dX, int m, int n, int layer,
                                   const LayerSettings* layers, const Through& own, const Pack& p) {
  const int64_t count = int64_t(m) * n;
  submit(p, element_cut(count), [=](int z, Part part) {
    const Range r = piece(count, part, kElementGrain);
    cpu::activity_backward(member(dY, z, p.stride), member(dX, z, p.stride), r.begin, r.end, m,
                           member(layers, z, p.stride)[layer].activity,
                           member_through(own, z, p.stride));
  });
}
void CpuBackend::loss(const LossShape& shape, const float* out, const float* target, float* d_out,
                      float* values, int m, int n, const MemberSettings* settings, const Pack& p) {
  submit(p, whole_cut(int64_t(m) * n), [=](int z, Part) {
    cpu::loss(shape, member(settings, z, p.stride)->loss, member(out, z, p.stride),
              member(target, z, p.data_stride), member(d_out, z, p.stride),
              member(values, z, p.stride), m, n);
  });
}
void CpuBackend::accumulate(const float* values, int count, int m, double* totals, const Pack& p) {
  submit(p, whole_cut(int64_t(count) * m), [=](int z, Part) {
    cpu::accumulate(member(values, z, p.stride), count, m, member(totals, z, p.stride));
    count_step(p, z);
  });
}
void CpuBackend::count_codes(const float* values, int count, int column, int m, double* bins, int,
                             const Pack& p) {
  submit(p, whole_cut(m), [=](int z, Part) {
    cpu::count_codes(member(values, z, p.stride), count, column, m, member(bins, z, p.stride));
  });
}
void CpuBackend::add_penalty(const double* weight_partials, int weight_blocks,
                             const double* activity_partials, int activity_blocks, int m,
                             double* totals, const Pack& p) {
  submit(p, whole_cut(weight_blocks + activity_blocks), [=](int z, Part) {
    double weights = 0, activity = 0;
    const double *w = member(weight_partials, z, p.stride),
                 *a = member(activity_partials, z, p.stride);
    for (int b = 0; b < weight_blocks; ++b) weights += w[b];
    for (int b = 0; b < activity_blocks; ++b) activity += a[b];
    member(totals, z, p.stride)[0] += double(m) * weights + activity;
  });
}
void CpuBackend::optimizer_step(const OptimizerStep& step, const Pack& p) {
  if (!p.step)
    throw std::invalid_argument(
        "optimizer_step: no step state (Pack::step) to take the step count from");
  // Keras's optimizers read and write about 8 floats a parameter (it, its gradient, two slots).
  submit(p, element_cut(8 * step.count), [=](int z, Part part) {
    const MemberStep b = member_step(step, z, p);
    const Range blocks = piece(step.blocks, part);
    cpu::optimizer_blocks(step, b, member(step.penalty, z, p.stride), int(blocks.begin),
                          int(blocks.end));
    // the other parts read neither field it writes
    if (part.index == 0) finish_member_step(step, b);
  });
}
void CpuBackend::gradient_norms(const OptimizerStep& step, const Pack& p) {
  submit(p, element_cut(step.count), [=](int z, Part part) {
    const Range blocks = piece(step.blocks, part);
    cpu::norm_partials(step, member_step(step, z, p), member(step.norm_partials, z, p.stride),
                       int(blocks.begin), int(blocks.end));
  });
  submit(p, whole_cut(step.blocks), [=](int z, Part) {
    cpu::finish_norms(step, member(step.norm_partials, z, p.stride),
                      member(step.norms, z, p.stride));
  });
}
void CpuBackend::weight_penalty(const OptimizerStep& step, const Pack& p) {
  submit(p, element_cut(step.count), [=](int z, Part part) {
    const Range blocks = piece(step.blocks, part);
    cpu::weight_penalty(step, member_step(step, z, p), member(step.penalty, z, p.stride),
                        int(blocks.begin), int(blocks.end));
  });
}
void CpuBackend::shuffle(int* order, int n, const MemberSettings* settings, int epoch,
                         const Pack& p) {
  submit(p, whole_cut(n), [=](int z, Part) {
    cpu::shuffle(member(order, z, p.rows_stride), n, member(settings, z, p.stride)->seed, epoch);
  });
}
void CpuBackend::gather(const float* src, int cols, const int* order, int m, float* dst,
                        const Pack& p) {
  submit(p, element_cut(int64_t(m) * cols), [=](int z, Part part) {
    const Range r = piece(m, part);  // rows of the batch
    if (r.size() == 0) return;
    cpu::gather(src, cols, member(order, z, p.rows_stride) + first_row(p, z) + r.begin,
                int(r.size()), member(dst, z, p.data_stride) + r.begin * cols);
  });
}

}  // namespace mf
