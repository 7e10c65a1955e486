#pragma once
// Output files written whole or not at all: into a temporary file beside the target, then renamed,
// so that a reader never sees half of one and a failure leaves the old file as it was.
#include <functional>
#include <iosfwd>
#include <string>

namespace mf {

// Writes what `write` puts on the stream to `path`; `what` names the kind of file in the UserError
// raised when it cannot be written ("the result file": "r.json: cannot write the result file (...)").
void write_file_atomically(const std::string& path, const std::string& what,
                           const std::function<void(std::ostream&)>& write);

}  // namespace mf
