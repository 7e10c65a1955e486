#pragma once
#include <stdexcept>
#include <string>

namespace mf {

// A mistake in what the user gave us: a spec, a data file, a flag, a cap that is
// too small. Reported as one line, exit code 2.
struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A failure of the machine or a library call (CUDA, file system): exit code 1.
struct SystemError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace mf

namespace mf {

// A model's memory plan or a request that does not fit under its cap.
struct OutOfMemory : UserError {
  using UserError::UserError;
};

}  // namespace mf
