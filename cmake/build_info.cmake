# Writes OUT (runtime/build_info.h's definitions) with the version and the commit the build is of;
# run at every build, it rewrites OUT only when they changed, so nothing recompiles for nothing.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
if(failed OR commit STREQUAL "")
  set(commit "unknown")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT changes STREQUAL "")
    string(APPEND commit "+changes")
  endif()
endif()
file(CONFIGURE OUTPUT "${OUT}" CONTENT [[
#include "runtime/build_info.h"

namespace mf {
const char* multifit_version() { return "@VERSION@"; }
const char* multifit_commit() { return "@commit@"; }
}  // namespace mf
]] @ONLY)
