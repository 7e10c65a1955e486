#pragma once
// Denormal floats flushed to zero, per thread.
//
// On x86 an operation with a denormal (subnormal) operand or result can take a
// microcode assist, tens of times slower than a normal one. Training makes them:
// Adam's first moment of a parameter whose gradient stays exactly zero (a dead
// relu's weights) decays by beta_1 = 0.9 a step, turns denormal after about 760
// steps and then sticks near 1e-45, because m * 0.1 rounds to zero. TensorFlow
// (Keras's backend) runs its CPU kernels with the same setting. A GPU handles denormals at
// full speed, so only host threads that do float work set it: the CPU backend's
// and host execution's.
namespace mf {

// Sets flush-to-zero (FTZ: denormal results become 0) and denormals-are-zero (DAZ: denormal
// inputs read as 0) for the calling thread; a no-op on processors without the modes.
void flush_denormals_on_this_thread();

// Flushes denormals on the calling thread while it lives, then puts back the modes it found: for
// a caller whose own host arithmetic (a run's reports) keeps IEEE's once the backend's work is
// done.
class DenormalsFlushedHere {
 public:
  DenormalsFlushedHere();
  ~DenormalsFlushedHere();
  DenormalsFlushedHere(const DenormalsFlushedHere&) = delete;
  DenormalsFlushedHere& operator=(const DenormalsFlushedHere&) = delete;

 private:
  unsigned long saved_ = 0;  // the control register as found (x86's MXCSR, ARM's FPCR)
};

}  // namespace mf
