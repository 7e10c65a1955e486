// Micro-benchmarks of every backend operation and of whole training steps, on
// the shapes of the Fashion-MNIST MLP (784-256-128-10) and of the seeds'
// Dense(64)->Dense(1) model. Each backend present is measured: cpu always;
// cuda with our kernels, with cuBLAS products and with cuDNN activations where
// a GPU exists, so that benchmarks/summarize.py can state our GEMM as a fraction
// of cuBLAS and set our activation and loss kernels beside cuDNN's. Two GEMM
// comparisons, kept apart: `gemm` is the plain product C = A·B (our tiled
// kernel with no epilogue against cublasSgemm alone), `dense_forward` the whole
// layer (ours fuses bias and activation; the cuBLAS path adds a kernel).
//
// Each iteration queues kRepeat calls and waits once, so the figure is the
// time per call with the wait amortized (a launch-bound kernel shows its
// launch cost, as a training loop would see it).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/gemm_products.h"
#include "nn/model.h"
#include "nn/settings.h"
#include "runtime/rng.h"
#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/machine_resources.h"
#include "target/stream.h"

namespace mf {
namespace {

constexpr int kRepeat = 50;

// Backend memory for the benchmarks, filled with small random numbers, freed at exit.
class Scratch {
 public:
  explicit Scratch(Backend& backend) : backend_(backend) {}
  ~Scratch() {
    for (auto& [p, bytes] : blocks_) backend_.upstream().deallocate(p, bytes);
  }
  float* floats(size_t n, float lo = -1.f, float hi = 1.f) {
    std::vector<float> host(n);
    Rng rng(blocks_.size() + 1);
    for (float& x : host) x = rng.uniform(lo, hi);
    auto* p = static_cast<float*>(backend_.upstream().allocate(n * sizeof(float)));
    backend_.to_device(p, host.data(), n * sizeof(float));
    blocks_.emplace_back(p, n * sizeof(float));
    return p;
  }
  // One member's settings: Keras's Adam defaults (SGD's momentum 0.9), seed 42.
  const MemberSettings* settings() {
    ModelSpec spec;
    spec.seed = 42;
    spec.optimizer.momentum = 0.9f;
    const MemberSettings s = member_settings(spec);
    auto* p = zeros<MemberSettings>(1);
    backend_.to_device(p, &s, sizeof s);
    backend_.synchronize();
    return p;
  }
  template <class T>
  T* zeros(size_t n) {
    void* p = backend_.upstream().allocate(n * sizeof(T));
    backend_.zero(p, n * sizeof(T));
    blocks_.emplace_back(p, n * sizeof(T));
    return static_cast<T*>(p);
  }

 private:
  Backend& backend_;
  std::vector<std::pair<void*, size_t>> blocks_;
};

void time_calls(benchmark::State& state, const std::function<void()>& wait,
                const std::function<void()>& call) {
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kRepeat; ++i) call();
    wait();
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / kRepeat);
  }
}

void time_calls(benchmark::State& state, Backend& backend, const std::function<void()>& call) {
  time_calls(
      state, [&] { backend.synchronize(); }, call);
}

struct Subject {
  std::string name;
  std::shared_ptr<Backend> backend;
  // the plain product's implementation, for CUDA subjects
  std::shared_ptr<gpu::GemmProducts> products;
};

struct Layer {
  int k, n;
  Activation act;
};
// The Fashion-MNIST MLP's layers, then the other MLPs' (784-100-10, 784-256-10) and the seeds' tiny
// model's (20-64-1): at batches 32 and 128 most of them take gemm's split-K path on an H200
// (kernels/gemm_plan.h), so summarize.py's fraction of cuBLAS covers it.
const Layer kFashionLayers[] = {{784, 256, Activation::relu},  {256, 128, Activation::relu},
                                {128, 10, Activation::linear}, {784, 100, Activation::relu},
                                {100, 10, Activation::linear}, {256, 10, Activation::linear},
                                {20, 64, Activation::relu},    {64, 1, Activation::sigmoid}};
const int kBatches[] = {32, 128, 1024};

void register_gemms(const Subject& s) {
  for (const Layer& l : kFashionLayers)
    for (int m : kBatches) {
      const std::string shape =
          "/m:" + std::to_string(m) + "/k:" + std::to_string(l.k) + "/n:" + std::to_string(l.n);
      const double flops = 2.0 * m * l.k * l.n;
      auto register_op = [&](const std::string& op, auto body) {
        benchmark::RegisterBenchmark((s.name + "/" + op + shape).c_str(), [=](benchmark::State&
                                                                                  state) {
          Scratch scratch(*s.backend);
          body(state, scratch, m, l);
          // Manual time sums the per-call times, so the rate is flops per call over time per call.
          state.counters["GFLOPS"] = benchmark::Counter(flops * double(state.iterations()) / 1e9,
                                                        benchmark::Counter::kIsRate);
        })->UseManualTime();
      };
      if (s.products)
        register_op("gemm", [s](benchmark::State& state, Scratch& x, int m, Layer l) {
          float *A = x.floats(size_t(m) * l.k), *B = x.floats(size_t(l.k) * l.n),
                *C = x.floats(size_t(m) * l.n);
          s.backend->synchronize();  // the inputs are written on the backend's stream
          gpu::Stream stream;
          time_calls(
              state, [&] { stream.synchronize(); },
              [&] { s.products->product(A, B, C, m, l.k, l.n, stream.get()); });
        });
      register_op("dense_forward", [s](benchmark::State& state, Scratch& x, int m, Layer l) {
        float *X = x.floats(size_t(m) * l.k), *W = x.floats(size_t(l.k) * l.n), *b = x.floats(l.n),
              *Y = x.floats(size_t(m) * l.n);
        time_calls(state, *s.backend,
                   [&] { s.backend->dense_forward(X, W, b, Y, nullptr, m, l.k, l.n, l.act); });
      });
      register_op("dense_backward_input", [s](benchmark::State& state, Scratch& x, int m, Layer l) {
        float *dZ = x.floats(size_t(m) * l.n), *W = x.floats(size_t(l.k) * l.n),
              *dX = x.floats(size_t(m) * l.k);
        time_calls(state, *s.backend,
                   [&] { s.backend->dense_backward_input(dZ, W, dX, m, l.k, l.n); });
      });
      register_op(
          "dense_backward_params", [s](benchmark::State& state, Scratch& x, int m, Layer l) {
            float *X = x.floats(size_t(m) * l.k), *dZ = x.floats(size_t(m) * l.n),
                  *dW = x.floats(size_t(l.k) * l.n), *db = x.floats(l.n);
            time_calls(state, *s.backend,
                       [&] { s.backend->dense_backward_params(X, dZ, dW, db, m, l.k, l.n); });
          });
    }
}

void register_elementwise(const Subject& s) {
  auto add = [&](const std::string& name, std::function<void(benchmark::State&, Scratch&)> body) {
    benchmark::RegisterBenchmark((s.name + "/" + name).c_str(), [=](benchmark::State& state) {
      Scratch scratch(*s.backend);
      body(state, scratch);
    })->UseManualTime();
  };
  Backend& b = *s.backend;
  add("activation_backward/n:32768", [&b](benchmark::State& st, Scratch& x) {
    float *Y = x.floats(32768), *dY = x.floats(32768);
    time_calls(st, b, [&] {
      b.activation_backward(dY, dY, 32768, {Activation::relu, Y, nullptr});
    });
  });
  add("loss_softmax_crossentropy/m:128/n:10", [&b](benchmark::State& st, Scratch& x) {
    float *out = x.floats(1280), *t = x.zeros<float>(128), *d = x.floats(1280),
          *values = x.floats(256);
    const LossShape shape{Loss::sparse_categorical_crossentropy,
                          false,
                          1,
                          {1, {Metric::sparse_categorical_accuracy}}};
    const MemberSettings* settings = x.settings();
    time_calls(st, b, [&] { b.loss(shape, out, t, d, values, 128, 10, settings); });
  });
  add("accumulate/m:128", [&b](benchmark::State& st, Scratch& x) {
    float* values = x.floats(256);
    double* totals = x.zeros<double>(2);
    time_calls(st, b, [&] { b.accumulate(values, 2, 128, totals); });
  });
  // The optimizer over the parameters of one tensor, as the Fashion-MNIST MLP's 235146.
  const auto optimizer = [&](const char* name, OptimizerKind kind, bool momentum) {
    add(std::string(name) + "/params:235146",
        [&b, kind, momentum](benchmark::State& st, Scratch& x) {
          OptimizerStep s;
          s.kind = kind, s.momentum_slot = momentum;
          s.count = 235146;
          s.params = x.floats(size_t(s.count)), s.grads = x.floats(size_t(s.count));
          s.slot[0] = x.zeros<float>(size_t(s.count)), s.slot[1] = x.zeros<float>(size_t(s.count));
          const ParamTensor tensor{0, s.count, 0, TensorRole::kernel, 0};
          auto* tensors = x.zeros<ParamTensor>(1);
          b.to_device(tensors, &tensor, sizeof tensor);
          s.tensors = tensors, s.tensor_count = 1, s.blocks = param_blocks(s.count);
          s.settings = x.settings(), s.layers = x.zeros<LayerSettings>(1);
          s.batch_rows = 128;
          auto* step = x.zeros<StepState>(1);
          StepState first;
          first.t = 1;  // step 1: the loss pass, which counts steps, is not timed here
          b.to_device(step, &first, sizeof first);
          time_calls(st, b, [&] { b.optimizer_step(s, {.step = step}); });
        });
  };
  optimizer("adam", OptimizerKind::adam, false);
  optimizer("sgd", OptimizerKind::sgd, true);
  add("shuffle/n:60000", [&b](benchmark::State& st, Scratch& x) {
    int* order = x.zeros<int>(60000);
    const MemberSettings* settings = x.settings();
    int epoch = 0;
    time_calls(st, b, [&] { b.shuffle(order, 60000, settings, epoch++); });
  });
  add("gather/m:128/cols:784", [&b](benchmark::State& st, Scratch& x) {
    float *src = x.floats(size_t(60000) * 784), *dst = x.floats(size_t(128) * 784);
    int* order = x.zeros<int>(60000);
    b.shuffle(order, 60000, x.settings(), 0);
    time_calls(st, b, [&] { b.gather(src, 784, order, 128, dst); });
  });
}

// the seeds' Dense(64, relu) -> Dense(1, sigmoid), binary cross-entropy, batch 64
ModelSpec seed_model() {
  ModelSpec spec;
  spec.name = "seed";
  spec.input = 20;
  spec.layers = {{64, Activation::relu}, {1, Activation::sigmoid}};
  spec.loss = Loss::binary_crossentropy;
  spec.fit.batch_size = 64;
  return spec;
}

ModelSpec fashion_model(int batch) {
  ModelSpec spec;
  spec.name = "fashion";
  spec.input = 784;
  spec.layers = {{256, Activation::relu}, {128, Activation::relu}, {10, Activation::softmax}};
  spec.loss = Loss::sparse_categorical_crossentropy;
  spec.fit.batch_size = batch;
  return spec;
}

// One training step of a model, or of a pack of `members` copies of it (each its own seed) that all
// read the same batch, launched call by call or, with `graph`, replayed from a CUDA graph.
void register_steps(const Subject& s) {
  auto add = [&](const std::string& name, ModelSpec spec, int members, bool graph) {
    if (graph && !s.backend->has_graphs()) return;
    const std::string kind = std::string(graph ? "train_step_graph/" : "train_step/") + name +
                             (members > 1 ? "/pack:" + std::to_string(members) : "");
    benchmark::RegisterBenchmark((s.name + "/" + kind).c_str(), [=](benchmark::State& state) {
      Scratch scratch(*s.backend);
      const int B = spec.fit.batch_size;
      float* X = scratch.floats(size_t(B) * spec.input, 0.f, 1.f);
      float* T = scratch.zeros<float>(size_t(B));  // class 0 / label 0
      std::vector<ModelSpec> specs(size_t(members), spec);
      for (int z = 0; z < members; ++z) specs[size_t(z)].seed = uint64_t(z);
      Model model(specs, *s.backend);
      const auto step = [&] { model.train_batch(X, T, B); };
      std::unique_ptr<Backend::StepGraph> captured = graph ? s.backend->capture(step) : nullptr;
      time_calls(state, *s.backend, [&] { captured ? captured->launch() : step(); });
      state.counters["samples/s"] = benchmark::Counter(
          double(B) * members * double(state.iterations()), benchmark::Counter::kIsRate);
    })->UseManualTime();
  };
  for (bool graph : {false, true}) {
    add("seed_64-1/batch:64", seed_model(), 1, graph);
    for (int members : {8, 128}) add("seed_64-1/batch:64", seed_model(), members, graph);
    for (int batch : {32, 128, 1024})
      add("fashion_784-256-128-10/batch:" + std::to_string(batch), fashion_model(batch), 1, graph);
  }
}

// The subject `make` gives, where the reference library it loads (cuBLAS, cuDNN) can be loaded;
// else it is said on stderr and in the run's context, and the other subjects' rows still run.
void add_library_subject(std::vector<Subject>& list, const std::string& name,
                         const std::function<Subject()>& make) {
  try {
    list.push_back(make());
  } catch (const UserError& e) {
    std::fprintf(stderr, "kernel_bench: no %s rows: %s\n", name.c_str(), e.what());
    benchmark::AddCustomContext("skipped " + name, e.what());
  }
}

std::vector<Subject> subjects() {
  std::vector<Subject> list{{"cpu", std::make_shared<CpuBackend>(), nullptr}};
  if (const int cores = usable_cores();
      cores > 1)  // a pack's members, a model's parts, over every core
    list.push_back(
        {"cpu_threads:" + std::to_string(cores), std::make_shared<CpuBackend>(cores), nullptr});
  if (!query_devices().devices.empty()) {
    list.push_back(
        {"cuda_tiled", gpu::make_cuda_backend({0, GemmImpl::tiled}), gpu::make_tiled_products()});
    add_library_subject(list, "cuda_cublas", [] {
      return Subject{"cuda_cublas", gpu::make_cuda_backend({0, GemmImpl::cublas}),
                     gpu::make_cublas_products()};
    });
#if defined(MF_HAVE_CUDNN)
    add_library_subject(list, "cuda_cudnn", [] {
      return Subject{"cuda_cudnn",
                     gpu::make_cuda_backend({0, GemmImpl::tiled, ActivationImpl::cudnn}), nullptr};
    });
#endif
  }
  return list;
}

}  // namespace
}  // namespace mf

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (const mf::Subject& s : mf::subjects()) {
    mf::register_gemms(s);
    mf::register_elementwise(s);
    mf::register_steps(s);
  }
  benchmark::AddCustomContext("devices", mf::query_devices().devices.empty()
                                             ? "none"
                                             : mf::describe(mf::query_devices().devices[0]));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
