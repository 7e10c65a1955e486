#include "kernels/openblas.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <vector>

#include "runtime/bytes.h"
#include "runtime/error.h"
#include "runtime/shared_library.h"

namespace mf::cpu {
namespace {

// What OpenBLAS 0.3 asks of malloc for a thread's work buffer (BUFFER_SIZE plus a page), rounded
// up.
constexpr size_t kWorkBuffer = (size_t(128) << 20) + (size_t(1) << 20);

// Room in the address space for `buffers` work buffers at once, else a UserError naming the limit.
void require_room_for_work_buffers(int buffers, const std::string& for_what) {
  const size_t bytes = kWorkBuffer * size_t(buffers);
  void* probe = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (probe != MAP_FAILED) {
    munmap(probe, bytes);
    return;
  }
  rlimit limit{};
  getrlimit(RLIMIT_AS, &limit);
  const std::string cap =
      limit.rlim_cur == RLIM_INFINITY ? "unlimited" : format_bytes(limit.rlim_cur);
  // What the process maps now (the first field of /proc/self/statm, in pages) plus the buffer.
  size_t pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  const size_t enough = pages * size_t(sysconf(_SC_PAGESIZE)) + bytes;
  throw UserError("the cpu backend needs " + format_bytes(bytes) +
                  " of address space for OpenBLAS's work " + for_what +
                  ", which this process's limit (ulimit -v: " + cap +
                  ") does not leave; raise the " + "limit to at least " + format_bytes(enough) +
                  " (ulimit -v " + std::to_string((enough + 1023) / 1024) + ")" +
                  (buffers > 1 ? " or lower --threads" : ""));
}

struct OpenBlas {
  SharedLibrary library;
  decltype(&cblas_sgemm) sgemm = lookup<decltype(sgemm)>(library, "cblas_sgemm");
  char* (*config)() = lookup<decltype(config)>(library, "openblas_get_config");
};

const OpenBlas& openblas() {
  static const OpenBlas api = [] {
    setenv("OPENBLAS_NUM_THREADS", "1", 1);  // read once, as the library loads: no thread pool
    OpenBlas loaded{SharedLibrary("libopenblas.so.0", "the cpu backend")};
    require_room_for_work_buffers(1, "buffer");
    // The first product takes the work buffer, now that there is room, and OpenBLAS keeps it for
    // every later one; taken later, under a limit, it can fail, and OpenBLAS retries that malloc
    // forever. So this must be a product that needs the buffer on every core type: SkylakeX's
    // small-matrix kernels do a small NN product (a 1x1x1 one included) without one; they skip TT,
    // and M*N*K above 100^3.
    constexpr int kSide = 128;
    const std::vector<float> in(kSide * kSide, 0.f);
    std::vector<float> out(kSide * kSide);
    loaded.sgemm(CblasRowMajor, CblasTrans, CblasTrans, kSide, kSide, kSide, 1.f, in.data(), kSide,
                 in.data(), kSide, 0.f, out.data(), kSide);
    return loaded;
  }();
  return api;
}

}  // namespace

void sgemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int m, int n, int k, const float* A,
           int lda, const float* B, int ldb, float* C, int ldc) {
  openblas().sgemm(CblasRowMajor, trans_a, trans_b, m, n, k, 1.f, A, lda, B, ldb, 0.f, C, ldc);
}

std::string openblas_library() { return openblas().library.path(); }

void require_room_for_threads(int threads) {
  openblas();
  // The calling thread's buffer is taken; each other thread takes its own at its first product.
  if (threads > 1)
    require_room_for_work_buffers(threads - 1,
                                  "buffers of " + std::to_string(threads - 1) + " more threads");
}

int openblas_max_threads() {
  const std::string config = openblas().config();
  const size_t at = config.find("MAX_THREADS=");
  const int threads = at == std::string::npos ? 0 : std::atoi(config.c_str() + at + 12);
  return threads > 0 ? threads : 64;
}

}  // namespace mf::cpu
