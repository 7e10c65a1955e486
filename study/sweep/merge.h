#pragma once
// multifit merge: the parts of one sweep, each trained apart (`run --shard I/N`, one task of a job
// array each; or a run killed before it ended, by its journal), made one document as of one run of
// the sweep: its models in sweep order, ranked, and each part's own figures under `shards`.
//
// A part is a result document of `run` (one mode's: a `--mode all` document is refused, see
// merge.cpp) or a journal (study/sweep/journal.h: its model lines of its run's mode, the last of a
// model winning). Parts are matched by what the documents carry (RunReport::sweep and ::shard): the
// sweep's name, its whole model count and fingerprint, and each model's place (`index`) and name. A
// part of another sweep, backend or mode, and parts that overlap (one model in two, a shard or a
// file given twice), are refused: merging them would make a document of no one sweep, or count a
// model twice. Models that no part has are not refused: the document holds the rest, and `missing`
// says which, so that a caller can say so (multifit merge exits 1).
#include <optional>
#include <string>
#include <vector>

#include "study/report/ranking.h"
#include "study/report/report.h"

namespace mf {

struct MergedRun {
  RunReport run;                // the models in sweep order, ranked; `shards`: each part's figures
  std::vector<size_t> missing;  // places of the sweep that no part has, in order
  // what a part had that is not in the merge, and why (one line each)
  std::vector<std::string> notes;
  // each part's line for the table: its file, shard, host and figures
  std::vector<std::string> parts;
  std::vector<std::optional<Shard>> part_shards;  // each part's shard, in the order given
};

// Reads and merges `paths`, ranking the models by `rank_by` (rank_run's default when absent).
// Throws UserError, one line naming the file (and the line or field, or both files and the model),
// for a part that cannot be read (missing, not a regular file, not JSON, not a multifit document or
// journal, a field that cannot be read) and for parts that do not belong together.
MergedRun merge_parts(const std::vector<std::string>& paths, std::optional<RankBy> rank_by);

// "3 of the sweep's 12 models are in no part: #2, #5, #8 (shard 2/3 is not among the parts)":
// how many, the first `named` places, and the shards that are wholly absent when the parts are
// shards of one count. "" when none is missing.
std::string missing_models_line(const MergedRun& merged, size_t named = 8);

}  // namespace mf
