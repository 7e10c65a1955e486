#pragma once
// Output files written whole or not at all: into a temporary file beside the target (its name holds
// the process id, so two runs writing one output never share it), synced, then renamed, so that a
// reader never sees half of one and a failure leaves the old file as it was and no temporary file.
// `-` is standard output instead, written as it goes.
#include <string>

namespace mf {

// Whether an output path means standard output.
inline bool is_standard_output(const std::string& path) { return path == "-"; }

// Writes `content` to `path`, or to standard output for `-`. Throws SystemError naming the path,
// `what` (the kind of file) and the OS's reason when a step fails (open, write, sync, close,
// rename): "r.json: cannot write the result file: No space left on device".
void write_output_file(const std::string& path, const std::string& what,
                       const std::string& content);

// Sets the process's standard output aside for the output that is `-`: from here on what is printed
// to stdout (the tables) goes to stderr, so that the document has stdout to itself. Called before
// anything is printed. Throws SystemError when stdout cannot be duplicated (it is closed).
void take_standard_output();

}  // namespace mf
