#pragma once
#include <cstddef>
#include <string>

namespace mf {

// "64MiB", "1.5GiB", "512KB", "4096" -> bytes. Throws UserError naming `what`.
size_t parse_bytes(const std::string& text, const std::string& what);
// The units parse_bytes reads, for messages: "B, KB, MB, GB, TB, KiB, MiB, GiB or TiB".
const std::string& size_units();
// 3145728 -> "3.00 MiB"
std::string format_bytes(size_t bytes);
// 298240 -> "291.25 KiB (298240 bytes)": for sizes set against each other in a message, which the
// rounded form alone can show as equal when they differ by a byte.
std::string format_bytes_exact(size_t bytes);

}  // namespace mf
