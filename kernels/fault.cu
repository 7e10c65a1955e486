// A device fault on purpose (run --inject-fault, Backend::inject_fault): one thread writes to
// address 0, which no allocation has, as a stray index in any kernel would write where it must not.
// On a GPU it is cudaErrorIllegalAddress, the sticky error that poisons the stream's CUDA context
// and every other stream of it; under host execution the same write is the host's SIGSEGV. Checked
// by: tests/hostexec/test_fault.cpp (a death test).
#include "kernels/kernels.h"

namespace mf::MF_TARGET {
namespace {

__global__ void write_through(int* address) { *address = 1; }

}  // namespace

void illegal_write(cudaStream_t stream) {
  // read at run time: a null the compiler sees would be a trap, not a write
  int* volatile nowhere = nullptr;
  launch{write_through, dim3(1), dim3(1), stream}(static_cast<int*>(nowhere));
}

}  // namespace mf::MF_TARGET
