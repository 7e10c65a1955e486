#include "runtime/float_mode.h"

#if defined(__x86_64__) || defined(__i386__)
#include <pmmintrin.h>
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
  _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
  _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#elif defined(__aarch64__)
  unsigned long fpcr;
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  __asm__ volatile("msr fpcr, %0"
                   :
                   : "r"(fpcr | (1ul << 24)));  // FZ: flush denormal inputs and results
#endif
}

DenormalsFlushedHere::DenormalsFlushedHere() : saved_(control_register()) {
  flush_denormals_on_this_thread();
}
DenormalsFlushedHere::~DenormalsFlushedHere() { set_control_register(saved_); }

}  // namespace mf
