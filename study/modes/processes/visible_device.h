#pragma once
// Which GPU a processes-mode worker is given: the value of its CUDA_VISIBLE_DEVICES, from this
// process's own, so that --devices means the same GPUs in every mode. A pure function of the
// variable's value, for the tests.
#include <optional>
#include <sstream>
#include <string>

namespace mf {

// The CUDA_VISIBLE_DEVICES of the worker of this process's device `device` (>= 0, --devices):
// - this process's variable unset (`parents_list` absent): the bare index, "2", since this process
//   sees every GPU;
// - set: its entry `device`, as written ("3", "GPU-8f2c..."); "" (no GPU) where the list has no
//   such entry, an empty list included: a GPU this process was not given is never handed out.
inline std::string visible_device(const std::optional<std::string>& parents_list, int device) {
  if (!parents_list) return std::to_string(device);
  std::stringstream list(*parents_list);
  std::string entry;
  for (int i = 0; std::getline(list, entry, ','); ++i)
    if (i == device) return entry;
  return "";
}

}  // namespace mf
