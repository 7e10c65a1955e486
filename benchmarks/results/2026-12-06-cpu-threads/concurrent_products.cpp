// One product at a time on one thread, then the same product on two threads at once (each its own
// operands), through OpenBLAS (cpu::sgemm) and through the cpu backend's products
// (cpu::product: libxsmm's kernel, on a transposed copy of op(B) where op(B) is transposed).
// Prints microseconds a product alone, a pair at once, and the pair's throughput against one.
//   g++ -O2 -std=c++20 -I. concurrent_products.cpp -o concurrent_products \
//       build/kernels/libmf_kernels.a build/runtime/libmf_runtime.a -lxsmm -lblas -ldl -lpthread
//   concurrent_products M N K TRANS_B   (C(M,N) = A(M,K) op(B), op(B) (K,N))
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "kernels/cpu_gemm.h"
#include "kernels/openblas.h"
#include "runtime/clock.h"

int main(int argc, char** argv) {
  if (argc < 5) return std::fprintf(stderr, "usage: concurrent_products M N K TRANS_B\n"), 2;
  const int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]);
  const bool tb = std::atoi(argv[4]) != 0;
  const int reps = int(2e10 / (double(m) * n * k + 2e4));
  for (const bool blas : {true, false}) {
    const auto work = [&](int r) {
      std::vector<float> A(size_t(m) * k, 0.3f), B(size_t(k) * n, 0.2f), C(size_t(m) * n);
      const int ldb = tb ? k : n;
      for (int i = 0; i < r; ++i)
        if (blas)
          mf::cpu::sgemm(CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, A.data(), k,
                         B.data(), ldb, C.data(), n);
        else
          mf::cpu::product(false, tb, m, n, k, A.data(), k, B.data(), ldb, C.data(), n);
    };
    work(5);
    mf::Clock::time_point start = mf::Clock::now();
    work(reps);
    const double one = mf::seconds_since(start) / reps;
    start = mf::Clock::now();
    std::thread other([&] { work(reps); });
    work(reps);
    other.join();
    const double pair = mf::seconds_since(start) / reps;
    std::printf(
        "%dx%dx%d %s %-8s alone %.1f us, two at once %.1f us a pair: %.2fx one's throughput\n", m,
        n, k, tb ? "NT" : "NN", blas ? "openblas" : "product", one * 1e6, pair * 1e6,
        2 * one / pair);
  }
}
