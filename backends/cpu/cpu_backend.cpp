#include "backends/cpu/cpu_backend.h"

#include <cstring>
#include <stdexcept>
#include <fstream>
#include <thread>
#include <utility>

#include "kernels/batch_cpu.h"
#include "kernels/dense_cpu.h"
#include "runtime/float_mode.h"
#include "kernels/loss_cpu.h"
#include "kernels/openblas.h"
#include "kernels/optimizer_cpu.h"
#include "runtime/clock.h"

namespace mf {

CpuBackend::CpuBackend() {
  flush_denormals_on_this_thread();
  cpu::openblas_library();  // loaded now, at start-up, not in the first training step
}

std::string CpuBackend::device() const {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "CPU";
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return model + " (" + std::to_string(std::thread::hardware_concurrency()) + " hardware threads, one BLAS thread per model)";
}

void CpuBackend::to_device(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
void CpuBackend::to_host(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
void CpuBackend::zero(void* dst, size_t bytes) { std::memset(dst, 0, bytes); }
void CpuBackend::to_host_strided(void* dst, size_t dst_pitch, const void* src, size_t pitch, size_t width,
                                 size_t rows) {
  for (size_t r = 0; r < rows; ++r)
    std::memcpy(static_cast<char*>(dst) + r * dst_pitch, static_cast<const char*>(src) + r * pitch, width);
}
void CpuBackend::zero_strided(void* dst, size_t pitch, size_t width, size_t rows) {
  for (size_t r = 0; r < rows; ++r) std::memset(static_cast<char*>(dst) + r * pitch, 0, width);
}
void CpuBackend::mark() { marks_.push_back(clock_seconds()); }
std::vector<double> CpuBackend::take_marks() { return std::exchange(marks_, {}); }

namespace {

void refuse_rows(const int* rows) {
  if (rows) throw std::logic_error("the cpu backend does not fuse the gather: pass it a gathered batch");
}

}  // namespace

void CpuBackend::dense_forward(const float* X, const float* W, const float* b, float* Y, int m, int k, int n,
                               Activation act, const int* rows, const Pack& p) {
  refuse_rows(rows);
  for (int z = 0; z < p.count; ++z)
    cpu::dense_forward(member(X, z, p.data_stride), member(W, z, p.stride), member(b, z, p.stride),
                       member(Y, z, p.stride), m, k, n, act);
}
void CpuBackend::dense_backward_input(const float* dZ, const float* W, float* dX, int m, int k, int n, const float* Y,
                                      Activation act, const Pack& p) {
  for (int z = 0; z < p.count; ++z) {
    float* dXz = member(dX, z, p.stride);
    cpu::dense_backward_input(member(dZ, z, p.stride), member(W, z, p.stride), dXz, m, k, n);
    if (Y) cpu::activation_backward(member(Y, z, p.stride), dXz, dXz, int64_t(m) * k, act);
  }
}
void CpuBackend::dense_backward_params(const float* X, const float* dZ, float* dW, float* db, int m, int k, int n,
                                       const int* rows, const Pack& p) {
  refuse_rows(rows);
  for (int z = 0; z < p.count; ++z)
    cpu::dense_backward_params(member(X, z, p.data_stride), member(dZ, z, p.stride), member(dW, z, p.stride),
                               member(db, z, p.stride), m, k, n);
}
void CpuBackend::activation_backward(const float* Y, const float* dY, float* dZ, int64_t count, Activation act,
                                     const Pack& p) {
  for (int z = 0; z < p.count; ++z)
    cpu::activation_backward(member(Y, z, p.stride), member(dY, z, p.stride), member(dZ, z, p.stride), count, act);
}
void CpuBackend::loss(Loss loss, const float* out, const float* target, float* d_out, float* row_loss,
                      float* row_correct, int m, int n, const Pack& p) {
  for (int z = 0; z < p.count; ++z)
    cpu::loss(loss, member(out, z, p.stride), member(target, z, p.data_stride), member(d_out, z, p.stride),
              member(row_loss, z, p.stride), member(row_correct, z, p.stride), m, n);
}
void CpuBackend::accumulate(const float* row_loss, const float* row_correct, int m, double* totals, const Pack& p) {
  for (int z = 0; z < p.count; ++z) {
    cpu::accumulate(member(row_loss, z, p.stride), member(row_correct, z, p.stride), m, member(totals, z, p.stride));
    count_step(p, z);
  }
}
void CpuBackend::adam(float* w, const float* g, float* m, float* v, int64_t n, const MemberSettings* settings,
                      int batch_rows, const Pack& p) {
  if (!p.step) throw std::invalid_argument("adam: no step state (Pack::step) to take the step count from");
  for (int z = 0; z < p.count; ++z) {
    StepState& step = *member(p.step, z, p.stride);
    cpu::adam(member(w, z, p.stride), member(g, z, p.stride), member(m, z, p.stride), member(v, z, p.stride), n,
              adam_step(*member(settings, z, p.stride), step.t));
    step.first_row += batch_rows;
  }
}
void CpuBackend::sgd(float* w, const float* g, float* velocity, int64_t n, const MemberSettings* settings,
                     int batch_rows, const Pack& p) {
  for (int z = 0; z < p.count; ++z) {
    const MemberSettings& s = *member(settings, z, p.stride);
    cpu::sgd(member(w, z, p.stride), member(g, z, p.stride), member(velocity, z, p.stride), n, s.learning_rate,
             s.momentum);
    if (p.step) member(p.step, z, p.stride)->first_row += batch_rows;
  }
}
void CpuBackend::shuffle(int* order, int n, const MemberSettings* settings, int epoch, const Pack& p) {
  for (int z = 0; z < p.count; ++z)
    cpu::shuffle(member(order, z, p.rows_stride), n, member(settings, z, p.stride)->seed, epoch);
}
void CpuBackend::gather(const float* src, int cols, const int* order, int m, float* dst, const Pack& p) {
  for (int z = 0; z < p.count; ++z)
    cpu::gather(src, cols, member(order, z, p.rows_stride) + first_row(p, z), m, member(dst, z, p.data_stride));
}

}  // namespace mf
