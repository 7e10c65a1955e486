#pragma once
// Sizes of the kernel tests under ThreadSanitizer (hostexec_tests_tsan, label tsan). Host execution
// plays each CUDA thread as an OS thread, and ThreadSanitizer checks each of their memory accesses and
// barriers: a fit or a large product costs 5 to 10 times what it does in hostexec_tests. A missing
// __syncthreads() is a race in any block of the kernel that has it, whatever the shape, so the twin
// runs the same tests, with every kernel, tile configuration, split-K plan, edge tile, pack and step
// graph they reach, on fewer rows and smaller products; hostexec_tests and gpu_tests run the sizes
// written first.
#include <string>

namespace mf::test {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderTsan = true;
#else
inline constexpr bool kUnderTsan = false;
#endif

// `size`, or under ThreadSanitizer `tsan_size`.
constexpr int tsan_or(int size, int tsan_size) { return kUnderTsan ? tsan_size : size; }

// The training tests' data set, "teacher:rows=R,classes=C" (the synthetic data, data/synthetic.cpp):
// 330 rows, which a validation split of 0.25 leaves as 247 training rows, 7 batches of 32 and a last
// of 23; under ThreadSanitizer 100 rows, 75 training rows, 2 batches of 32 and a last of 11: full
// batches and a short last one still, so the same two step graphs and the same kernels.
inline constexpr int kTeacherRows = tsan_or(330, 100);
inline std::string teacher(int classes, int rows = kTeacherRows) {
  return "teacher:rows=" + std::to_string(rows) + ",classes=" + std::to_string(classes);
}

}  // namespace mf::test
