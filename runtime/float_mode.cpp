#include "runtime/float_mode.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace mf {
namespace {

unsigned long control_register() {
#if defined(__x86_64__) || defined(__i386__)
  return _mm_getcsr();
#elif defined(__aarch64__)
  unsigned long fpcr;
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  return fpcr;
#else
  return 0;
#endif
}

void set_control_register([[maybe_unused]] unsigned long value) {
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(static_cast<unsigned>(value));
#elif defined(__aarch64__)
  __asm__ volatile("msr fpcr, %0" : : "r"(value));
#endif
}

}  // namespace

void flush_denormals_on_this_thread() {
#if defined(__x86_64__) || defined(__i386__)
  set_control_register(control_register() | 0x8040);  // MXCSR's FTZ (bit 15) and DAZ (bit 6)
#elif defined(__aarch64__)
  set_control_register(control_register() | (1ul << 24));  // FPCR's FZ: denormal inputs and results
#endif
}

DenormalsFlushedHere::DenormalsFlushedHere() : saved_(control_register()) {
  flush_denormals_on_this_thread();
}
DenormalsFlushedHere::~DenormalsFlushedHere() { set_control_register(saved_); }

}  // namespace mf
