#pragma once
// A shared library opened at run time (dlopen) and kept for the life of the
// process. The GPU reference paths load cuBLAS and cuDNN this way, only when a
// run asks for them: a binary that never uses them never maps them (libcublasLt
// alone is over 500 MB), and a machine without them still runs everything else.
#include <string>

namespace mf {

class SharedLibrary {
 public:
  // Opens `soname` (e.g. "libcublas.so.13") through the dynamic loader's search:
  // LD_LIBRARY_PATH, the runpaths, the system's cache. `needed_for` names what
  // asked for it ("--gemm cublas"). Throws UserError naming the library, what
  // needed it and the loader's reason when it cannot be opened.
  SharedLibrary(std::string soname, const std::string& needed_for);

  // The address of `name`; throws UserError when the library lacks it (an older version).
  void* symbol(const char* name) const;

  // Where the loader found the library (an absolute path).
  std::string path() const;

 private:
  std::string soname_;
  // never closed: libraries with device state must outlive every handle they gave out
  void* handle_ = nullptr;
};

// Loads every entry of an API table: `api.entry = lookup<decltype(api.entry)>(library,
// "cublasCreate_v2")`.
template <class F>
F lookup(const SharedLibrary& library, const char* name) {
  return reinterpret_cast<F>(library.symbol(name));
}

}  // namespace mf
