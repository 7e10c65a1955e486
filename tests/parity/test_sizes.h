#pragma once
// The kernel tests' sizes: the full ones, or small ones under ThreadSanitizer (hostexec_tests_tsan,
// label tsan) and where MULTIFIT_TEST_SIZES=small (scripts/test.sh --quick). Host execution plays
// each CUDA thread as an OS thread, and ThreadSanitizer checks each of their memory accesses and
// barriers: a fit or a large product costs 5 to 10 times what it does in hostexec_tests. A missing
// __syncthreads() is a race in any block of the kernel that has it, whatever the shape, so the
// small sizes keep every kernel, tile configuration, split-K plan, edge tile, pack and step graph
// that the full ones reach, on fewer rows and smaller products. hostexec_tests and gpu_tests run
// the full sizes (written first where a test gives both) unless asked for the small ones.
#include <cstdlib>
#include <string>
#include <string_view>

namespace mf::test {

inline bool small_sizes() {
#if defined(__SANITIZE_THREAD__)
  return true;
#else
  static const bool asked = [] {
    const char* sizes = std::getenv("MULTIFIT_TEST_SIZES");
    return sizes && std::string_view(sizes) == "small";
  }();
  return asked;
#endif
}

// `full`, or at the small sizes `small`.
inline int full_or_small(int full, int small) { return small_sizes() ? small : full; }

// The training tests' data set, "teacher:rows=R,classes=C" (the synthetic data,
// data/synthetic.cpp): 330 rows, which a validation split of 0.25 leaves as 247 training rows, 7
// batches of 32 and a last of 23; at the small sizes 100 rows, 75 training rows, 2 batches of 32
// and a last of 11: full batches and a short last one still, so the same two step graphs and the
// same kernels.
inline int teacher_rows() { return full_or_small(330, 100); }
inline std::string teacher(int classes, int rows = teacher_rows()) {
  return "teacher:rows=" + std::to_string(rows) + ",classes=" + std::to_string(classes);
}

}  // namespace mf::test
