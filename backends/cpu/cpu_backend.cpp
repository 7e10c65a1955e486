#include "backends/cpu/cpu_backend.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "kernels/batch_cpu.h"
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

// The least work worth a thread of its own: a product part of 2^16 multiply-adds (about 1.5 µs on
// one core), an element-wise part of 2^14 floats. Below them a member's operation stays whole.
constexpr int64_t kLeastProductPart = int64_t(1) << 16;
constexpr int64_t kLeastElementPart = int64_t(1) << 14;
// Element-wise parts start at multiples of 64 floats: the vector loops of every CPU width step
// through a part as they step through the whole, so each element gets the same instructions; a
// product's column parts at multiples of 16, for its epilogue's.
constexpr int64_t kElementGrain = 64, kColumnGrain = 16;

// Whether a product's output of `rows` x `cols` is split by columns rather than rows: when it is
// wider than tall (a small batch's), so that each thread reads only its columns' share of the
// weights.
bool by_columns(int rows, int cols) { return cols > rows; }

void refuse_rows(const int* rows) {
  if (rows)
    throw std::logic_error("the cpu backend does not fuse the gather: pass it a gathered batch");
}

}  // namespace

// The operations of one step, replayed: a pack's members spread over the threads, each running its
// whole step (every operation, in order) before the next member's; a model alone runs the
// operations in order, its split ones on every thread, with a barrier where one thread's results
// are read by another.
class CpuBackend::RecordedStep final : public StepGraph {
 public:
  RecordedStep(std::vector<Operation> ops, int threads) : ops_(std::move(ops)), threads_(threads) {}

  void launch() override {
    if (ops_.empty()) return;
    const int members = ops_.front().members;
    if (members > 1) {
      const int team = std::min(threads_, members);
      return cpu::on_threads(team, [&](int thread, int size) {
        cpu::each_part(thread, size, team, [&](Part part) {
          const Range own = piece(members, part);
          for (int64_t z = own.begin; z < own.end; ++z)
            for (const Operation& op : ops_)
              if (!op.skips(int(z))) op.work(int(z), {});
        });
      });
    }
    const bool split =
        std::any_of(ops_.begin(), ops_.end(), [](const Operation& op) { return op.parts > 1; });
    if (!split) {
      for (const Operation& op : ops_)
        if (!op.skips(0)) op.work(0, {});
      return;
    }
    cpu::on_threads(threads_, [&](int thread, int size) {
      for (size_t i = 0; i < ops_.size(); ++i) {
        const Operation& op = ops_[i];
        if (i > 0 && (op.parts > 1 || ops_[i - 1].parts > 1)) cpu::team_barrier();
        if (op.skips(0)) continue;
        if (op.parts > 1)
          cpu::each_part(thread, size, op.parts, [&](Part part) { op.work(0, part); });
        else if (thread == 0)
          op.work(0, {});
      }
    });
  }

 private:
  std::vector<Operation> ops_;
  int threads_;
};

CpuBackend::CpuBackend(int threads) : made_with_(threads), threads_(threads) {
  if (threads < 1)
    throw std::invalid_argument("cpu backend: " + std::to_string(threads) + " threads");
  flush_denormals_on_this_thread();
  cpu::require_room_for_threads(
      threads);  // OpenBLAS loaded now, at start-up, not in the first training step
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
  return std::make_unique<RecordedStep>(std::move(ops), threads_);
}

int CpuBackend::parts_for(int64_t work, int64_t least) const {
  return threads_ > 1 && work >= least * threads_ ? threads_ : 1;
}

void CpuBackend::submit(const Pack& pack, int parts,
                        std::function<void(int member, cpu::Part part)> work) {
  Operation op{pack.count, parts, std::move(work), pack.step, pack.stride};
  if (recording_) return recording_->push_back(std::move(op));
  run(op, threads_);
}

// Now: a pack's members spread over the threads, or a model alone's parts one per thread.
void CpuBackend::run(const Operation& op, int threads) {
  const int team = std::min(threads, op.members > 1 ? op.members : op.parts);
  if (team <= 1) {  // one thread, or one member whole
    for (int z = 0; z < op.members; ++z)
      if (!op.skips(z)) op.work(z, {});
    return;
  }
  cpu::on_threads(team, [&](int thread, int size) {
    if (op.members == 1) {
      if (!op.skips(0))
        cpu::each_part(thread, size, op.parts, [&](Part part) { op.work(0, part); });
      return;
    }
    cpu::each_part(thread, size, team, [&](Part part) {
      const Range own = piece(op.members, part);
      for (int64_t z = own.begin; z < own.end; ++z)
        if (!op.skips(int(z))) op.work(int(z), {});
    });
  });
}

void CpuBackend::dense_forward(const float* X, const float* W, const float* b, float* Y, float* Z,
                               int m, int k, int n, Activation act, const int* rows,
                               const Pack& p) {
  refuse_rows(rows);
  submit(p, parts_for(int64_t(m) * k * n, kLeastProductPart), [=](int z, Part part) {
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
  submit(p, parts_for(int64_t(m) * k * n, kLeastProductPart), [=](int z, Part part) {
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
  submit(p, parts_for(int64_t(m) * k * n, kLeastProductPart), [=](int z, Part part) {
    const Range dw_rows = piece(k, part), db_cols = piece(n, part, 16);
    cpu::dense_backward_params_part(member(X, z, p.data_stride), member(dZ, z, p.stride),
                                    member(dW, z, p.stride), member(db, z, p.stride), m, k, n,
                                    int(dw_rows.begin), int(dw_rows.end), int(db_cols.begin),
                                    int(db_cols.end));
  });
}
void CpuBackend::activation_forward(const float* X, float* Y, int64_t count, Activation act,
                                    const Pack& p) {
  submit(p, parts_for(count, kLeastElementPart), [=](int z, Part part) {
    const Range r = piece(count, part, kElementGrain);
    cpu::activation_forward(member(X, z, p.data_stride), member(Y, z, p.stride), r.begin, r.end,
                            act);
  });
}
void CpuBackend::activation_backward(const float* dY, float* dX, int64_t count, const Through& own,
                                     const Through& below, const Pack& p) {
  submit(p, parts_for(count, kLeastElementPart), [=](int z, Part part) {
    const Range r = piece(count, part, kElementGrain);
    cpu::activation_backward(member(dY, z, p.stride), member(dX, z, p.stride), r.begin, r.end,
                             member_through(own, z, p.stride), member_through(below, z, p.stride));
  });
}
void CpuBackend::dropout_forward(const float* X, float* Y, int m, int n, int layer,
                                 const MemberSettings* settings, const LayerSettings* layers,
                                 const Pack& p) {
  const int64_t count = int64_t(m) * n;
  submit(p, parts_for(count, kLeastElementPart), [=](int z, Part part) {
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
  submit(p, parts_for(count, kLeastElementPart), [=](int z, Part part) {
    const Range r = piece(count, part, kElementGrain);
    cpu::dropout(member(dY, z, p.stride), member(dX, z, p.stride), r.begin, r.end,
                 member(layers, z, p.stride)[layer], member(settings, z, p.stride)->seed, layer,
                 steps_before(p, z, true), member_through(below, z, p.stride));
  });
}
void CpuBackend::batch_norm_forward(const float* X, float* Y, int m, int n,
                                    const BatchNormBuffers& bn, const LayerSettings* layers,
                                    bool training, const Pack& p) {
  submit(p, parts_for(int64_t(m) * n, kLeastElementPart), [=](int z, Part part) {
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
  submit(p, parts_for(int64_t(m) * n, kLeastElementPart), [=](int z, Part part) {
    const Range c = piece(n, part);
    cpu::batch_norm_backward(member(X, z, p.data_stride), member(dY, z, p.stride),
                             member(dX, z, p.stride), m, n, member_buffers(bn, z, p.stride),
                             member_through(below, z, p.stride), int(c.begin), int(c.end));
  });
}
void CpuBackend::activity_penalty(const float* Y, int m, int n, int layer,
                                  const LayerSettings* layers, double* partials, int blocks,
                                  const Pack& p) {
  submit(p, 1, [=](int z, Part) {
    cpu::activity_penalty(member(Y, z, p.stride), int64_t(m) * n,
                          member(layers, z, p.stride)[layer].activity,
                          member(partials, z, p.stride), blocks);
  });
}
void CpuBackend::activity_backward(const float* dY, float* dX, int m, int n, int layer,
                                   const LayerSettings* layers, const Through& own, const Pack& p) {
  const int64_t count = int64_t(m) * n;
  submit(p, parts_for(count, kLeastElementPart), [=](int z, Part part) {
    const Range r = piece(count, part, kElementGrain);
    cpu::activity_backward(member(dY, z, p.stride), member(dX, z, p.stride), r.begin, r.end, m,
                           member(layers, z, p.stride)[layer].activity,
                           member_through(own, z, p.stride));
  });
}
void CpuBackend::loss(const LossShape& shape, const float* out, const float* target, float* d_out,
                      float* values, int m, int n, const MemberSettings* settings, const Pack& p) {
  submit(p, 1, [=](int z, Part) {
    cpu::loss(shape, member(settings, z, p.stride)->loss, member(out, z, p.stride),
              member(target, z, p.data_stride), member(d_out, z, p.stride),
              member(values, z, p.stride), m, n);
  });
}
void CpuBackend::accumulate(const float* values, int count, int m, double* totals, const Pack& p) {
  submit(p, 1, [=](int z, Part) {
    cpu::accumulate(member(values, z, p.stride), count, m, member(totals, z, p.stride));
    count_step(p, z);
  });
}
void CpuBackend::add_penalty(const double* weight_partials, int weight_blocks,
                             const double* activity_partials, int activity_blocks, int m,
                             double* totals, const Pack& p) {
  submit(p, 1, [=](int z, Part) {
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
  submit(p, parts_for(step.count, kLeastElementPart), [=](int z, Part part) {
    const MemberStep b = member_step(step, z, p);
    const Range blocks = piece(step.blocks, part);
    cpu::optimizer_blocks(step, b, member(step.penalty, z, p.stride), int(blocks.begin),
                          int(blocks.end));
    if (part.index == 0)
      finish_member_step(step, b);  // the other parts read neither field it writes
  });
}
void CpuBackend::gradient_norms(const OptimizerStep& step, const Pack& p) {
  submit(p, parts_for(step.count, kLeastElementPart), [=](int z, Part part) {
    const Range blocks = piece(step.blocks, part);
    cpu::norm_partials(step, member_step(step, z, p), member(step.norm_partials, z, p.stride),
                       int(blocks.begin), int(blocks.end));
  });
  submit(p, 1, [=](int z, Part) {
    cpu::finish_norms(step, member(step.norm_partials, z, p.stride),
                      member(step.norms, z, p.stride));
  });
}
void CpuBackend::weight_penalty(const OptimizerStep& step, const Pack& p) {
  submit(p, parts_for(step.count, kLeastElementPart), [=](int z, Part part) {
    const Range blocks = piece(step.blocks, part);
    cpu::weight_penalty(step, member_step(step, z, p), member(step.penalty, z, p.stride),
                        int(blocks.begin), int(blocks.end));
  });
}
void CpuBackend::shuffle(int* order, int n, const MemberSettings* settings, int epoch,
                         const Pack& p) {
  submit(p, 1, [=](int z, Part) {
    cpu::shuffle(member(order, z, p.rows_stride), n, member(settings, z, p.stride)->seed, epoch);
  });
}
void CpuBackend::gather(const float* src, int cols, const int* order, int m, float* dst,
                        const Pack& p) {
  submit(p, parts_for(int64_t(m) * cols, kLeastElementPart), [=](int z, Part part) {
    const Range r = piece(m, part);  // rows of the batch
    if (r.size() == 0) return;
    cpu::gather(src, cols, member(order, z, p.rows_stride) + first_row(p, z) + r.begin,
                int(r.size()), member(dst, z, p.data_stride) + r.begin * cols);
  });
}

}  // namespace mf
