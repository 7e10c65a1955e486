#include "runtime/shared_library.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/resource.h>

#include <filesystem>

#include "runtime/bytes.h"
#include "runtime/error.h"

namespace mf {

SharedLibrary::SharedLibrary(std::string soname, const std::string& needed_for)
    : soname_(std::move(soname)) {
  handle_ = dlopen(soname_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_) return;
  const char* error = dlerror();
  const std::string why = error ? error : "unknown reason";
  // A library that is there but cannot be mapped is most often an address-space limit.
  rlimit limit{};
  const bool limited = getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
  const std::string fix =
      why.find("No such file") == std::string::npos && limited
          ? "raise the address-space limit (ulimit -v: " + format_bytes(limit.rlim_cur) + ")"
          : "install it or add its folder to LD_LIBRARY_PATH";
  throw UserError(needed_for + ": cannot load " + soname_ + " (" + why + "); " + fix);
}

void* SharedLibrary::symbol(const char* name) const {
  dlerror();
  void* address = dlsym(handle_, name);
  if (!address)
    throw UserError(path() + " has no " + name +
                    "; it is older than the version multifit was built against");
  return address;
}

std::string SharedLibrary::path() const {
  link_map* map = nullptr;
  if (dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name) return soname_;
  // "bin/../lib/x" as "lib/x"
  return std::filesystem::path(map->l_name).lexically_normal().string();
}

}  // namespace mf
