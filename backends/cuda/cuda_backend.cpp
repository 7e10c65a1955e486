#include "backends/cuda/cuda_backend.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "kernels/kernels.h"
#include "backends/cuda/gemm_products.h"
#include "backends/cuda/library_activations.h"
#include "target/device_memory.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/green_context.h"
#include "target/stream.h"

namespace mf::MF_TARGET {
namespace {

// The device's SM count, which gemm's split-K plan fills: an H200's under host execution
// (kernels/gemm_plan.h), so that its tests split what an H200 would.
int plan_sms() {
#if defined(MF_HOST_EXEC)
  return kHostExecSms;
#else
  int device = 0, sms = 0;
  MF_CUDA_CHECK(cudaGetDevice(&device));
  MF_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
#endif
}

// Our tiled kernels, with the split-K workspace that every plan for `sms` SMs fits
// (gemm_workspace_floats: 4.3 MB for 132 SMs), made once so a captured step allocates nothing. The
// products run on one stream, one after another, so one workspace serves them all. `sms`: the
// device's, or those of the green context the stream runs on, which split-K's plan then fills.
class TiledProducts final : public GemmProducts {
 public:
  explicit TiledProducts(int sms) : work_{nullptr, gemm_workspace_floats(sms), sms} {
    MF_CUDA_CHECK(
        cudaMalloc(reinterpret_cast<void**>(&work_.data), size_t(work_.floats) * sizeof(float)));
  }
  ~TiledProducts() override { cudaFree(work_.data); }
  TiledProducts(const TiledProducts&) = delete;
  TiledProducts& operator=(const TiledProducts&) = delete;

  void product(const float* A, const float* B, float* C, int m, int k, int n,
               cudaStream_t stream) override {
    gemm(A, B, C, m, k, n, false, false, {}, {}, stream, work_);
  }
  bool fuses_gather() const override { return true; }
  void forward(const float* X, const float* W, const float* b, float* Y, float* Z, int m, int k,
               int n, Activation act, const int* rows, const Pack& pack,
               cudaStream_t stream) override {
    gemm(X, W, Y, m, k, n, false, false, {.rows = rows, .bias = b, .act = act, .pre_activation = Z},
         {pack.count, pack.data_stride, pack.stride, pack.stride, pack.rows_stride, pack.step},
         stream, work_);
  }
  void backward_input(const float* dZ, const float* W, float* dX, int m, int k, int n,
                      const Through& below, const Pack& pack, cudaStream_t stream) override {
    gemm(dZ, W, dX, m, n, k, false, true,
         {.through = below},  // K = n; the activation's backward in the same launch
         {pack.count, pack.stride, pack.stride, pack.stride, 0, pack.step}, stream, work_);
  }
  void backward_params(const float* X, const float* dZ, float* dW, float* db, int m, int k, int n,
                       const int* rows, const Pack& pack, cudaStream_t stream) override {
    gemm(X, dZ, dW, k, m, n, true, false,
         {.rows = rows, .col_sums = db},  // K = m; db in the same launch
         {pack.count, pack.data_stride, pack.stride, pack.stride, pack.rows_stride, pack.step},
         stream, work_);
  }

 private:
  GemmWorkspace work_;
};

class CudaBackend final : public Backend {
 public:
  // library: cuDNN for activations and softmax, or nullptr for our kernels. partition: the green
  // context its stream is made on (its kernels run on its SMs), or nullptr for the whole device.
  // Made with `device_index` current; the stream, events and handles belong to that device.
  CudaBackend(std::string name, std::string device, int device_index,
              std::shared_ptr<const GreenContext> partition, std::unique_ptr<GemmProducts> products,
              std::unique_ptr<LibraryActivations> library)
      : name_(std::move(name)),
        device_(std::move(device)),
        device_index_(device_index),
        partition_(std::move(partition)),
        stream_(new_stream(partition_.get())),
        products_(std::move(products)),
        library_(std::move(library)) {
    anchor_marks();
  }
  // Its members go with its own device current, whichever thread lets it go (streams mode: the
  // main thread, after the phase).
  ~CudaBackend() override { cudaSetDevice(device_index_); }

  std::string name() const override { return name_; }
  std::string device() const override { return device_; }
  std::string device_schedule() const override {
    unsigned flags = 0;
    MF_CUDA_CHECK(cudaSetDevice(device_index_));
    MF_CUDA_CHECK(cudaGetDeviceFlags(&flags));
    switch (flags & cudaDeviceScheduleMask) {
      case cudaDeviceScheduleSpin:
        return "spin";
      case cudaDeviceScheduleYield:
        return "yield";
      case cudaDeviceScheduleBlockingSync:
        return "blocking_sync";
      default:
        return "auto";
    }
  }
  Upstream& upstream() override { return upstream_; }

  void to_device(void* dst, const void* src, size_t bytes) override {
    MF_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s()));
  }
  void to_host(void* dst, const void* src, size_t bytes) override {
    // Small reads (metrics) go through the pinned buffer: one short DMA, then a wait on this stream
    // only.
    if (bytes <= staging_.bytes()) {
      MF_CUDA_CHECK(cudaMemcpyAsync(staging_.data(), src, bytes, cudaMemcpyDeviceToHost, s()));
      stream_.synchronize();
      std::memcpy(dst, staging_.data(), bytes);
      return;
    }
    MF_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s()));
    stream_.synchronize();
  }
  void zero(void* dst, size_t bytes) override {
    MF_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, s()));
  }
  // One 2D copy (or memset) where its pitch is one CUDA takes (under 2 GiB), else one per row.
  void to_host_strided(void* dst, size_t dst_pitch, const void* src, size_t pitch, size_t width,
                       size_t rows) override {
    if (rows == 1) return to_host(dst, src, width);  // through the pinned buffer when small
    if (pitch < kMaxPitch) {
      MF_CUDA_CHECK(
          cudaMemcpy2DAsync(dst, dst_pitch, src, pitch, width, rows, cudaMemcpyDeviceToHost, s()));
    } else {
      for (size_t r = 0; r < rows; ++r)
        MF_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + r * dst_pitch,
                                      static_cast<const char*>(src) + r * pitch, width,
                                      cudaMemcpyDeviceToHost, s()));
    }
    stream_.synchronize();
  }
  void zero_strided(void* dst, size_t pitch, size_t width, size_t rows) override {
    if (rows == 1 || pitch >= kMaxPitch) {
      for (size_t r = 0; r < rows; ++r) zero(static_cast<char*>(dst) + r * pitch, width);
      return;
    }
    MF_CUDA_CHECK(cudaMemset2DAsync(dst, pitch, 0, width, rows, s()));
  }
  void synchronize() override { stream_.synchronize(); }
  std::unique_ptr<HostBuffer> host_buffer(size_t bytes) override {
    struct Pinned final : HostBuffer {
      explicit Pinned(size_t bytes) : memory(bytes) {}
      void* data() override { return memory.data(); }
      PinnedBuffer memory;
    };
    return std::make_unique<Pinned>(bytes);
  }
  // An event on this stream; a wait sleeps (cudaEventBlockingSync) rather than spin on a core that
  // the input pipeline's workers and other models share.
  std::unique_ptr<Fence> fence() override {
    struct StreamFence final : Fence {
      StreamFence(const Stream& stream, int device) : stream(stream), device(device) {}
      void record() override { event.record(stream); }
      void wait() override {
        MF_CUDA_CHECK(cudaSetDevice(device));  // the waiting thread's device: the event's
        event.synchronize();
      }
      const Stream& stream;
      const int device;
      Event event{cudaEventBlockingSync | cudaEventDisableTiming};
    };
    return std::make_unique<StreamFence>(stream_, device_index_);
  }
  std::string fault() override {
    cudaSetDevice(device_index_);
    const cudaError_t status = cudaStreamSynchronize(s());
    return status == cudaSuccess ? "" : cudaGetErrorString(status);
  }
  void inject_fault() override {
    cudaSetDevice(device_index_);
    MF_TARGET::illegal_write(s());
    // throws: the illegal address, now the context's error
    MF_CUDA_CHECK(cudaStreamSynchronize(s()));
  }
  void mark() override {
    // created once, reused every epoch
    if (marked_ == marks_.size()) marks_.push_back(std::make_unique<Event>());
    marks_[marked_++]->record(stream_);
  }
  std::vector<double> take_marks() override {
    std::vector<double> times(marked_);
    for (size_t i = 0; i < marked_; ++i)
      times[i] = origin_s_ + 1e-3 * marks_[i]->elapsed_ms_since(*origin_);
    marked_ = 0;
    anchor_marks();  // elapsed times are float milliseconds: kept short, they stay exact to a
                     // microsecond
    return times;
  }

  // Our kernels only: MULTIFIT_SYNC_LAUNCHES waits after every launch, which a capturing stream
  // refuses, and the reference libraries may set themselves up at their first call, which a capture
  // must not hold. Steps then run as they are.
  bool has_graphs() const override { return !sync_launches() && fuses_gather(); }
  std::unique_ptr<StepGraph> capture(const std::function<void()>& step) override {
    struct CapturedStep final : StepGraph {
      CapturedStep(const Stream& stream, const std::function<void()>& step)
          : stream(stream), graph(stream, step) {}
      void launch() override { graph.launch(stream); }
      const Stream& stream;
      Graph graph;
    };
    return std::make_unique<CapturedStep>(stream_, step);
  }

  // The reference paths keep gathered batches: cuBLAS's products and cuDNN's softmax read them.
  bool fuses_gather() const override { return products_->fuses_gather() && !library_; }
  void dense_forward(const float* X, const float* W, const float* b, float* Y, float* Z, int m,
                     int k, int n, Activation act, const int* rows = nullptr,
                     const Pack& pack = {}) override {
    if (!library_ || !library_->has_forward(act))
      return products_->forward(X, W, b, Y, Z, m, k, n, act, rows, pack, s());
    products_->forward(X, W, b, Y, Z, m, k, n, Activation::linear, rows, pack, s());
    for (int z = 0; z < pack.count; ++z)
      library_->forward(member(Y, z, pack.stride), int64_t(m) * n, act, s());
  }
  void dense_backward_input(const float* dZ, const float* W, float* dX, int m, int k, int n,
                            const Through& below = {}, const Pack& pack = {}) override {
    products_->backward_input(dZ, W, dX, m, k, n, below, pack, s());
  }
  void dense_backward_params(const float* X, const float* dZ, float* dW, float* db, int m, int k,
                             int n, const int* rows = nullptr, const Pack& pack = {}) override {
    products_->backward_params(X, dZ, dW, db, m, k, n, rows, pack, s());
  }
  void activation_forward(const float* X, float* Y, int64_t count, Activation act,
                          const Pack& pack = {}) override {
    MF_TARGET::activation_forward(X, Y, count, act, pack, s());
  }
  void activation_backward(const float* dY, float* dX, int64_t count, const Through& own,
                           const Through& below = {}, const Pack& pack = {}) override {
    if (!library_ || !library_->has_backward(own.act) || below.any())
      return MF_TARGET::activation_backward(dY, dX, count, own, below, pack, s());
    for (int z = 0; z < pack.count; ++z)
      library_->backward(member(own.y, z, pack.stride), member(dY, z, pack.stride),
                         member(dX, z, pack.stride), count, own.act, s());
  }
  void dropout_forward(const float* X, float* Y, int m, int n, int layer,
                       const MemberSettings* settings, const LayerSettings* layers,
                       const Pack& pack) override {
    MF_TARGET::dropout_forward(X, Y, m, n, layer, settings, layers, pack, s());
  }
  void dropout_backward(const float* dY, float* dX, int m, int n, int layer,
                        const MemberSettings* settings, const LayerSettings* layers,
                        const Through& below, const Pack& pack) override {
    MF_TARGET::dropout_backward(dY, dX, m, n, layer, settings, layers, below, pack, s());
  }
  void batch_norm_forward(const float* X, float* Y, int m, int n, const BatchNormBuffers& bn,
                          const LayerSettings* layers, bool training,
                          const Pack& pack = {}) override {
    MF_TARGET::batch_norm_forward(X, Y, m, n, bn, layers, training, pack, s());
  }
  void batch_norm_backward(const float* X, const float* dY, float* dX, int m, int n,
                           const BatchNormBuffers& bn, const Through& below,
                           const Pack& pack = {}) override {
    MF_TARGET::batch_norm_backward(X, dY, dX, m, n, bn, below, pack, s());
  }
  void activity_penalty(const float* Y, int m, int n, int layer, const LayerSettings* layers,
                        double* partials, int blocks, const Pack& pack = {}) override {
    MF_TARGET::activity_penalty(Y, m, n, layer, layers, partials, blocks, pack, s());
  }
  void activity_backward(const float* dY, float* dX, int m, int n, int layer,
                         const LayerSettings* layers, const Through& own,
                         const Pack& pack = {}) override {
    MF_TARGET::activity_backward(dY, dX, m, n, layer, layers, own, pack, s());
  }
  void loss(const LossShape& shape, const float* out, const float* target, float* d_out,
            float* values, int m, int n, const MemberSettings* settings,
            const Pack& pack = {}) override {
    if (library_ && shape.loss == Loss::sparse_categorical_crossentropy) {
      // The probabilities, overwritten by the gradient in place.
      for (int z = 0; z < pack.count; ++z)
        library_->softmax(member(out, z, pack.stride), member(d_out, z, pack.stride), m, n, s());
      return crossentropy_from_probabilities(shape, d_out, target, d_out, values, m, n, pack, s());
    }
    MF_TARGET::loss(shape, out, target, d_out, values, m, n, settings, pack, s());
  }
  void accumulate(const float* values, int count, int m, double* totals,
                  const Pack& pack = {}) override {
    MF_TARGET::accumulate(values, count, m, totals, pack, s());
  }
  void count_codes(const float* values, int count, int column, int m, double* bins, int bin_count,
                   const Pack& pack = {}) override {
    MF_TARGET::count_codes(values, count, column, m, bins, bin_count, pack, s());
  }
  void loss_and_accumulate(const LossShape& shape, const float* out, const float* target,
                           float* d_out, float* values, int m, int n, double* totals,
                           const MemberSettings* settings, const int* rows = nullptr,
                           const Pack& pack = {}) override {
    // cuDNN's softmax first: two passes
    if (library_ && shape.loss == Loss::sparse_categorical_crossentropy)
      return Backend::loss_and_accumulate(shape, out, target, d_out, values, m, n, totals, settings,
                                          rows, pack);
    MF_TARGET::loss_and_accumulate(shape, out, target, d_out, values, m, n, totals, settings, rows,
                                   pack, s());
  }
  void add_penalty(const double* weight_partials, int weight_blocks,
                   const double* activity_partials, int activity_blocks, int m, double* totals,
                   const Pack& pack = {}) override {
    MF_TARGET::add_penalty(weight_partials, weight_blocks, activity_partials, activity_blocks, m,
                           totals, pack, s());
  }
  void optimizer_step(const OptimizerStep& step, const Pack& pack) override {
    MF_TARGET::optimizer_step(step, pack, s());
  }
  void gradient_norms(const OptimizerStep& step, const Pack& pack) override {
    MF_TARGET::gradient_norms(step, pack, s());
  }
  void weight_penalty(const OptimizerStep& step, const Pack& pack) override {
    MF_TARGET::weight_penalty(step, pack, s());
  }
  void shuffle(int* order, int n, const MemberSettings* settings, int epoch,
               const Pack& pack = {}) override {
    MF_TARGET::shuffle(order, n, settings, epoch, pack, s());
  }
  void gather(const float* src, int cols, const int* order, int m, float* dst,
              const Pack& pack = {}) override {
    MF_TARGET::gather(src, cols, order, m, dst, pack, s());
  }

 private:
  // cudaDevAttrMaxPitch on current GPUs: 2 GiB - 1
  static constexpr size_t kMaxPitch = size_t(1) << 31;
  static constexpr int kAnchorTries = 4;
  cudaStream_t s() const { return stream_.get(); }
  // A stream of the whole device, or one on `partition`'s SMs (a GPU's only: make_cuda_backend
  // refuses a partition under host execution).
  static Stream new_stream(const GreenContext* partition) {
#if !defined(MF_HOST_EXEC)
    if (partition) return Stream(static_cast<cudaStream_t>(partition->create_stream()));
#endif
    (void)partition;
    return Stream();
  }
  // The origin of the marks on both clocks: an event recorded on the idle stream completes between
  // a clock read before its record and one after its wait. Of a few tries, the tightest bracket's
  // middle is taken, off by at most half of it (microseconds) even when the thread was preempted in
  // one of them.
  void anchor_marks() {
    double tightest = INFINITY;
    for (int attempt = 0; attempt < kAnchorTries; ++attempt) {
      const double before = clock_seconds();
      trial_->record(stream_);
      stream_.synchronize();
      const double after = clock_seconds();
      if (after - before < tightest) {
        tightest = after - before;
        std::swap(origin_, trial_);
        origin_s_ = 0.5 * (before + after);
      }
    }
  }

  std::string name_, device_;
  int device_index_;
  std::shared_ptr<const GreenContext> partition_;  // before the stream: it goes after it
  Stream stream_;
  DeviceUpstream upstream_;
  PinnedBuffer staging_{4096};
  std::unique_ptr<GemmProducts> products_;
  std::unique_ptr<LibraryActivations> library_;
  std::unique_ptr<Event> origin_ = std::make_unique<Event>(), trial_ = std::make_unique<Event>();
  double origin_s_ = 0;  // clock_seconds() at origin_
  std::vector<std::unique_ptr<Event>> marks_;
  size_t marked_ = 0;  // marks_ recorded since the last take
};

}  // namespace

std::unique_ptr<GemmProducts> make_tiled_products() {
  return std::make_unique<TiledProducts>(plan_sms());
}

std::unique_ptr<Backend> make_cuda_backend(const CudaOptions& options) {
  MF_CUDA_CHECK(cudaSetDevice(options.device));
  // A host thread waiting for the device sleeps until it is woken: with cudaDeviceScheduleAuto it
  // spins while the process has fewer contexts than cores, and the threads of many models spinning
  // at their epochs' ends would take the cores whose sharing a run measures. Every mode sets the
  // same, so that a model's solo run and its run among others wait alike. (Since CUDA 12 the flags
  // of a device whose context exists are overwritten, so the order of backends does not matter.)
  MF_CUDA_CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
#if defined(MF_HOST_EXEC)
  if (options.gemm == GemmImpl::cublas)
    throw UserError("--gemm cublas: cuBLAS needs a GPU; host execution runs the tiled kernels");
  if (options.activations == ActivationImpl::cudnn)
    throw UserError("--activations cudnn: cuDNN needs a GPU; host execution runs our kernels");
  if (options.partition)
    throw UserError(
        "--sm-partitions, \"sms\": green contexts need a GPU; host execution has no SMs to split");
  const std::string device = "host execution of the CUDA kernels (" +
                             std::to_string(std::thread::hardware_concurrency()) + " CPU threads)";
  return std::make_unique<CudaBackend>("host-exec", device, options.device, nullptr,
                                       make_tiled_products(), nullptr);
#else
  cudaDeviceProp prop{};
  MF_CUDA_CHECK(cudaGetDeviceProperties(&prop, options.device));
  const std::string device = std::string(prop.name) + " (cuda:" + std::to_string(options.device) +
                             ", " + std::to_string(prop.multiProcessorCount) + " SMs, sm_" +
                             std::to_string(prop.major) + std::to_string(prop.minor) + ")";
  std::unique_ptr<LibraryActivations> library;
  if (options.activations == ActivationImpl::cudnn) {
#if defined(MF_HAVE_CUDNN)
    library = make_cudnn_activations();
#else
    throw UserError(
        "--activations cudnn: this build found no cuDNN headers; install them and rebuild, or drop the flag");
#endif
  }
  std::unique_ptr<GemmProducts> products;
  if (options.gemm == GemmImpl::cublas)
    products = make_cublas_products();
  else if (options.partition)
    products = std::make_unique<TiledProducts>(options.partition->sms());
  else
    products = make_tiled_products();
  return std::make_unique<CudaBackend>("cuda", device, options.device, options.partition,
                                       std::move(products), std::move(library));
#endif
}

}  // namespace mf::MF_TARGET
