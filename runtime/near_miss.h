#pragma once
// What a mistyped name was meant to be: "did you mean --epochs?" on the command line, "did you mean
// \"epochs\"?" in a spec.
#include <string>
#include <vector>

namespace mf {

// The one of `known` closest to `word` by edit distance (a swap of two neighbours counts as one
// edit), when it is close enough to be what was meant: at most 2 edits, and at most a third of the
// longer name. "" when none is, or when `word` is itself known.
std::string near_miss(const std::string& word, const std::vector<std::string>& known);
// The near miss as a message says it, quoted: ` (did you mean "epochs"?)`, or "" when there is
// none.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& known);

}  // namespace mf
