#include "backends/cpu_backend.h"

#include <cstring>
#include <stdexcept>
#include <fstream>
#include <thread>
#include <utility>

#include "kernels/batch_cpu.h"
#include "kernels/dense_cpu.h"
#include "kernels/float_mode.h"
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
void CpuBackend::mark() { marks_.push_back(clock_seconds()); }
std::vector<double> CpuBackend::take_marks() { return std::exchange(marks_, {}); }

void CpuBackend::dense_forward(const float* X, const float* W, const float* b, float* Y, int m, int k, int n,
                               Activation act, const int* rows) {
  if (rows) throw std::logic_error("the cpu backend does not fuse the gather: pass it a gathered batch");
  cpu::dense_forward(X, W, b, Y, m, k, n, act);
}
void CpuBackend::dense_backward_input(const float* dZ, const float* W, float* dX, int m, int k, int n, const float* Y,
                                      Activation act) {
  cpu::dense_backward_input(dZ, W, dX, m, k, n);
  if (Y) cpu::activation_backward(Y, dX, dX, int64_t(m) * k, act);
}
void CpuBackend::dense_backward_params(const float* X, const float* dZ, float* dW, float* db, int m, int k, int n,
                                       const int* rows) {
  if (rows) throw std::logic_error("the cpu backend does not fuse the gather: pass it a gathered batch");
  cpu::dense_backward_params(X, dZ, dW, db, m, k, n);
}
void CpuBackend::activation_backward(const float* Y, const float* dY, float* dZ, int64_t count,
                                     Activation act) {
  cpu::activation_backward(Y, dY, dZ, count, act);
}
void CpuBackend::loss(Loss loss, const float* out, const float* target, float* d_out, float* row_loss,
                      float* row_correct, int m, int n) {
  cpu::loss(loss, out, target, d_out, row_loss, row_correct, m, n);
}
void CpuBackend::accumulate(const float* row_loss, const float* row_correct, int m, double* totals) {
  cpu::accumulate(row_loss, row_correct, m, totals);
}
void CpuBackend::adam(float* w, const float* g, float* m, float* v, int64_t n, const AdamStep& step) {
  cpu::adam(w, g, m, v, n, step);
}
void CpuBackend::sgd(float* w, const float* g, float* velocity, int64_t n, float lr, float momentum) {
  cpu::sgd(w, g, velocity, n, lr, momentum);
}
void CpuBackend::shuffle(int* order, int n, uint64_t seed, int epoch) { cpu::shuffle(order, n, seed, epoch); }
void CpuBackend::gather(const float* src, int cols, const int* order, int m, float* dst) {
  cpu::gather(src, cols, order, m, dst);
}

}  // namespace mf
