#pragma once
// --save-best K DIR's names: the option's value, what it writes in DIR, and the name of a model's
// files there. The folder's other files: the top K (top_k.h), the staging folder and its keeper
// (staging.h), the best K published into DIR (publish.h), and the checks before a run in
// the command line's (apps/multifit/run_checks.h).
#include <cstddef>
#include <string>

namespace mf {

struct SaveBest {
  size_t k = 0;     // keep this many, 1 or more
  std::string dir;  // in this folder, made when missing (its parent must exist)
};

// The staging folder of a run in one process (or of MPI rank 0), inside DIR.
inline constexpr const char* kStagingFolder = ".staging";
// The index of the models kept, in DIR.
inline constexpr const char* kBestIndex = "best.json";
// A model's files, STEM (best_file_stem) then these: its weights as `train --save` writes them
// (nn/weights.h), and its spec as `train --load` reads it.
inline constexpr const char* kWeightsSuffix = ".weights";
inline constexpr const char* kSpecSuffix = ".spec.json";

// MPI rank r's staging folder inside DIR: kStagingFolder for rank 0, its rank sibling
// (study/rank_path.h) for another.
std::string staging_folder(int rank);

// The name of a model's files in DIR, before their suffix: the model's name where it is a plain
// file name (letters, digits, '.', '_', '-', '+', '=', not starting with '.'), else the name with
// every other byte written %XX; a stem longer than 200 bytes so is cut to 180 and ends ~INDEX (its
// place in the sweep). No two models of a sweep get the same stem, and no model's files are named
// .staging or best.json.
std::string best_file_stem(const std::string& name, size_t index);

}  // namespace mf
