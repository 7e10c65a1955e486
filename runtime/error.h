#pragma once
// Every error class and every check macro of multifit, in one header that
// depends on nothing else of it, so every layer (the kernels included) can use
// it. The exit codes follow the class: UserError 2, SystemError 1.
#include <stdexcept>
#include <string>

namespace mf {

// The exit codes of the commands, and of each model of a run (its report's exit code): success, a
// failure of the machine (SystemError, a model that diverged), a mistake in what was given
// (UserError, memory over a cap), and an interruption (Ctrl-C or SIGTERM: 128 + SIGINT, as a shell
// reports a process that SIGINT ended).
enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitMistake = 2, kExitInterrupted = 130 };

// A mistake in what the user gave us: a spec, a data file, a flag, a cap that is
// too small. Reported as one line, exit code 2.
struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Memory that does not fit: a plan over its cap, or more than the host or device can give.
struct OutOfMemory : UserError {
  using UserError::UserError;
};

// A failure of the machine or a library call (file system, CUDA): exit code 1.
struct SystemError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A failed call of CUDA or a CUDA library: which call, where, and the library's message.
struct CudaError : SystemError {
  using SystemError::SystemError;
};

// A failed call of NVML, the driver's management library (GPU utilization and memory): which call,
// where, and NVML's message. Not a CudaError: NVML is no part of CUDA, and failing it never poisons
// a CUDA context.
struct NvmlError : SystemError {
  using SystemError::SystemError;
};

// The one wording of a failed call, for the runtime and the libraries alike.
inline std::string failed_call(const char* call, const char* file, int line, const char* message) {
  return std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " + message;
}
[[noreturn]] inline void throw_cuda_error(const char* call, const char* file, int line,
                                          const char* message) {
  throw CudaError(failed_call(call, file, line, message));
}
[[noreturn]] inline void throw_nvml_error(const char* call, const char* file, int line,
                                          const char* message) {
  throw NvmlError(failed_call(call, file, line, message));
}

}  // namespace mf

// A CUDA runtime call, checked: target/target.h defines cuda_check for each target (GPU, host
// execution).
#define MF_CUDA_CHECK(call) ::mf::MF_TARGET::cuda_check((call), #call, __FILE__, __LINE__)

// A call of a CUDA library that returns a status (cuBLAS, cuDNN, and CUPTI to come), checked
// against its success value; message_of(status) is the library's own text for the status.
#define MF_LIBRARY_CHECK(call, success, message_of)                           \
  do {                                                                        \
    const auto status_ = (call);                                              \
    if (status_ != (success))                                                 \
      ::mf::throw_cuda_error(#call, __FILE__, __LINE__, message_of(status_)); \
  } while (0)

// The same for a call of NVML, which fails with NvmlError.
#define MF_NVML_CHECK(call, success, message_of)                              \
  do {                                                                        \
    const auto status_ = (call);                                              \
    if (status_ != (success))                                                 \
      ::mf::throw_nvml_error(#call, __FILE__, __LINE__, message_of(status_)); \
  } while (0)
