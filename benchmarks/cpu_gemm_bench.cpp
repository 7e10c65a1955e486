// The CPU backend's products on both libraries, for the rule in kernels/cpu_gemm.h: each product of
// the Fashion-MNIST MLP (784-256-128-10) at batches 32 and 128 and of the seeds' tiny model
// (20-64-1, batch 64), forward (NN), input gradient (NT) and weight gradient (TN), plus shapes at
// the rule's edges, timed on OpenBLAS, on libxsmm's kernel (where it makes one) and on the path the
// rule picks. One thread, as each of the backend's threads calls them.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "kernels/cpu_gemm.h"
#include "kernels/libxsmm.h"
#include "kernels/openblas.h"
#include "runtime/rng.h"

namespace mf {
namespace {

struct Shape {
  bool trans_a, trans_b;
  int m, n, k;
};

std::vector<Shape> shapes() {
  std::vector<Shape> list;
  auto layer = [&](int batch, int in, int out) {
    list.push_back({false, false, batch, out, in});  // Y = X·W
    list.push_back({false, true, batch, in, out});   // dX = dZ·W'
    list.push_back({true, false, in, out, batch});   // dW = X'·dZ
  };
  for (int batch : {32, 128}) {
    layer(batch, 784, 256);
    layer(batch, 256, 128);
    layer(batch, 128, 10);
  }
  layer(64, 20, 64);
  layer(64, 64, 1);
  // the rule's edges: 2^15 multiply-adds; 8 and 4 output columns
  list.push_back({false, false, 32, 32, 32});
  list.push_back({false, false, 256, 8, 256});
  list.push_back({false, false, 256, 4, 256});
  return list;
}

void time_product(benchmark::State& state, const Shape& s, int path) {
  const int lda = s.trans_a ? s.m : s.k, ldb = s.trans_b ? s.k : s.n, ldc = s.n;
  Rng rng(1);
  std::vector<float> A(size_t(s.m) * s.k), B(size_t(s.k) * s.n), C(size_t(s.m) * s.n);
  for (float& x : A) x = rng.uniform(-1.f, 1.f);
  for (float& x : B) x = rng.uniform(-1.f, 1.f);
  const cpu::SmallKernel kernel =
      cpu::libxsmm_kernel(s.trans_a, s.trans_b, s.m, s.n, s.k, lda, ldb, ldc);
  if (path == 1 && !kernel) return state.SkipWithError("libxsmm makes no kernel for this shape");
  for (auto _ : state) {
    if (path == 0)
      cpu::sgemm(s.trans_a ? CblasTrans : CblasNoTrans, s.trans_b ? CblasTrans : CblasNoTrans, s.m,
                 s.n, s.k, A.data(), lda, B.data(), ldb, C.data(), ldc);
    else if (path == 1)
      kernel(A.data(), B.data(), C.data());
    else
      cpu::product(s.trans_a, s.trans_b, s.m, s.n, s.k, A.data(), lda, B.data(), ldb, C.data(),
                   ldc);
    benchmark::DoNotOptimize(C.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] = benchmark::Counter(
      2.0 * s.m * s.n * s.k * double(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

}  // namespace
}  // namespace mf

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const char* paths[] = {"openblas", "libxsmm", "chosen"};
  for (const mf::Shape& s : mf::shapes())
    for (int path = 0; path < 3; ++path) {
      const std::string name =
          std::string("gemm/") + (s.trans_a ? "T" : "N") + (s.trans_b ? "T" : "N") +
          "/m:" + std::to_string(s.m) + "/n:" + std::to_string(s.n) + "/k:" + std::to_string(s.k) +
          "/" + paths[path] +
          (path == 2 ? (mf::cpu::takes_libxsmm(s.trans_a, s.trans_b, s.m, s.n, s.k) ? ":libxsmm"
                                                                                    : ":openblas")
                     : "");
      benchmark::RegisterBenchmark(
          name.c_str(), [s, path](benchmark::State& state) { mf::time_product(state, s, path); });
    }
  benchmark::AddCustomContext("libxsmm", mf::cpu::libxsmm_description());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
