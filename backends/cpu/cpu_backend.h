#pragma once
// The reference backend: plain C++ on host memory, OpenBLAS for the products.
// Runs everywhere; every other backend is tested against it.
#include "backends/backend.h"

namespace mf {

class CpuBackend final : public Backend {
 public:
  // Flushes denormals on the calling thread, which runs every operation (runtime/float_mode.h), and
  // loads OpenBLAS (a UserError when it cannot be loaded).
  CpuBackend();
  std::string name() const override { return "cpu"; }
  std::string device() const override;
  Upstream& upstream() override { return upstream_; }

  void to_device(void* dst, const void* src, size_t bytes) override;
  void to_host(void* dst, const void* src, size_t bytes) override;
  void zero(void* dst, size_t bytes) override;
  void to_host_strided(void* dst, size_t dst_pitch, const void* src, size_t pitch, size_t width,
                       size_t rows) override;
  void zero_strided(void* dst, size_t pitch, size_t width, size_t rows) override;
  void synchronize() override {}
  void mark() override;
  std::string fault() override { return ""; }  // a CPU fault ends the process; nothing is left to report
  std::vector<double> take_marks() override;

  // rows must be null: the cpu backend's products (OpenBLAS) read a gathered batch. A pack's members
  // run one after another, each through the single-model reference.
  void dense_forward(const float* X, const float* W, const float* b, float* Y, int m, int k, int n,
                     Activation act, const int* rows = nullptr, const Pack& pack = {}) override;
  void dense_backward_input(const float* dZ, const float* W, float* dX, int m, int k, int n, const float* Y = nullptr,
                            Activation act = Activation::linear, const Pack& pack = {}) override;
  void dense_backward_params(const float* X, const float* dZ, float* dW, float* db, int m, int k, int n,
                             const int* rows = nullptr, const Pack& pack = {}) override;
  void activation_backward(const float* Y, const float* dY, float* dZ, int64_t count, Activation act,
                           const Pack& pack = {}) override;
  void loss(Loss loss, const float* out, const float* target, float* d_out, float* row_loss, float* row_correct,
            int m, int n, const Pack& pack = {}) override;
  void accumulate(const float* row_loss, const float* row_correct, int m, double* totals,
                  const Pack& pack = {}) override;
  void adam(float* w, const float* g, float* m, float* v, int64_t n, const MemberSettings* settings, int batch_rows,
            const Pack& pack) override;
  void sgd(float* w, const float* g, float* velocity, int64_t n, const MemberSettings* settings, int batch_rows,
           const Pack& pack = {}) override;
  void shuffle(int* order, int n, const MemberSettings* settings, int epoch, const Pack& pack = {}) override;
  void gather(const float* src, int cols, const int* order, int m, float* dst, const Pack& pack = {}) override;

 private:
  HostUpstream upstream_;
  std::vector<double> marks_;
};

}  // namespace mf
