#include "runtime/build_info.h"

#if defined(MF_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace mf {

std::string describe_build() {
  std::string build =
      std::string("multifit ") + multifit_version() + " (commit " + multifit_commit() + "), ";
#if defined(MF_HAVE_CUDA)
  // CUDART_VERSION is 1000 * major + 10 * minor.
  build += "with CUDA " + std::to_string(CUDART_VERSION / 1000) + "." +
           std::to_string(CUDART_VERSION % 1000 / 10);
#else
  build += "without CUDA (MULTIFIT_CUDA=OFF)";
#endif
#if defined(MF_HAVE_MPI)
  return build + ", with MPI";
#else
  return build + ", without MPI (MULTIFIT_MPI=OFF)";
#endif
}

bool built_with_cuda() {
#if defined(MF_HAVE_CUDA)
  return true;
#else
  return false;
#endif
}

}  // namespace mf
