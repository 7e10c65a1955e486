#pragma once
#include <string>

namespace mf {

// The spec reference that `multifit train --help` prints: every key, its default and its unit
// (the parser is nn/spec.cpp), and every name each family takes. It is the one reference:
// docs/USAGE.md points to `multifit train --help`.
std::string spec_reference();

}  // namespace mf
