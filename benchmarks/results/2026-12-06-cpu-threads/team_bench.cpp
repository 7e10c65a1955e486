// Thread teams compared on one operation of `parts` parts, each a fixed amount of float work: the
// calling thread alone, the cpu backend's team (backends/cpu/cpu_threads.h), an OpenMP parallel
// region (static parts; OMP_WAIT_POLICY=passive in the environment for a sleeping wait) and
// oneTBB's task arena (parallel_for, one task a part). Prints microseconds an operation.
//   g++ -O2 -std=c++20 -fopenmp -I. team_bench.cpp -o team_bench
//   build/backends/cpu/libmf_backend_cpu.a \
//       build/kernels/libmf_kernels.a build/runtime/libmf_runtime.a -ltbb -lxsmm -lblas -ldl
//       -lpthread
//   team_bench HOW THREADS OP_US PARTS SECONDS   (HOW: one, team, omp, tbb)
#include <omp.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "backends/cpu/cpu_threads.h"

namespace {
float sink[64][16];
// One unit: 64 multiply-adds on 16 floats of the part's own, in registers.
__attribute__((noinline)) void part_work(int part, int units) {
  float a[16];
  for (int i = 0; i < 16; ++i) a[i] = sink[part & 63][i];
  for (int u = 0; u < units; ++u)
    for (int r = 0; r < 4; ++r)
      for (int i = 0; i < 16; ++i) a[i] = a[i] * 0.999f + 0.001f;
  for (int i = 0; i < 16; ++i) sink[part & 63][i] = a[i];
}
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 6)
    return std::fprintf(stderr, "usage: team_bench HOW THREADS OP_US PARTS SECONDS\n"), 2;
  const std::string how = argv[1];
  const int threads = std::atoi(argv[2]), parts = std::atoi(argv[4]);
  const double op_us = std::atof(argv[3]), seconds = std::atof(argv[5]);
  // A unit's time, measured once quiet and passed in MF_UNIT_S so that every run under load does
  // the same work (measured beside busy processes it would come out longer).
  double unit_s = getenv("MF_UNIT_S") ? std::atof(getenv("MF_UNIT_S")) : 0;
  if (unit_s == 0) {
    const double start = now();
    for (int i = 0; i < 2000; ++i) part_work(i, 1000);
    unit_s = (now() - start) / 2e6;
    std::fprintf(stderr, "MF_UNIT_S=%g\n", unit_s);
  }
  const int units = std::max(1, int(op_us * 1e-6 / unit_s / parts));
  const int ops = std::max(10, int(seconds / (op_us * 1e-6)));
  mf::cpu::Team team(threads);
  tbb::task_arena arena(threads);
  const std::function<void(int)> work = [&](int p) { part_work(p, units); };
  const double start = now();
  for (int o = 0; o < ops; ++o) {
    if (how == "one") {
      for (int p = 0; p < parts; ++p) work(p);
    } else if (how == "team") {
      team.run(parts, work);
    } else if (how == "omp") {
#pragma omp parallel num_threads(threads)
      for (int p = omp_get_thread_num(); p < parts; p += omp_get_num_threads()) work(p);
    } else if (how == "tbb") {
      arena.execute([&] { tbb::parallel_for(0, parts, 1, work, tbb::simple_partitioner()); });
    }
  }
  std::printf("%s %d %g %d %.3f\n", how.c_str(), threads, op_us, parts,
              (now() - start) / ops * 1e6);
}
