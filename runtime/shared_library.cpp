#include "runtime/shared_library.h"

#include <dlfcn.h>
#include <link.h>

#include <filesystem>

#include "runtime/error.h"

namespace mf {

SharedLibrary::SharedLibrary(std::string soname, const std::string& needed_for) : soname_(std::move(soname)) {
  handle_ = dlopen(soname_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* why = dlerror();
    throw UserError(needed_for + ": cannot load " + soname_ + " (" + (why ? why : "unknown reason") +
                    "); install it or add its folder to LD_LIBRARY_PATH");
  }
}

void* SharedLibrary::symbol(const char* name) const {
  dlerror();
  void* address = dlsym(handle_, name);
  if (!address)
    throw UserError(path() + " has no " + name + "; it is older than the version multifit was built against");
  return address;
}

std::string SharedLibrary::path() const {
  link_map* map = nullptr;
  if (dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name) return soname_;
  return std::filesystem::path(map->l_name).lexically_normal().string();  // "bin/../lib/x" as "lib/x"
}

}  // namespace mf
