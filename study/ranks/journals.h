#pragma once
// The journals of a run over MPI ranks (study/ranks/run_over_ranks.h): rank 0's at PATH, as one
// process's, and rank r's at PATH.rank-r beside it, each written by its own rank as its models end
// (study/sweep/journal.h), so that a rank that dies loses only its models in flight.
//
// `--resume` reads them all, whatever number of ranks (or none: a resume in one process) finishes
// the run: rank 0's journal, appended to, takes in the models the others ended, and the others are
// then set aside (PATH.rank-r.previous) as their ranks start afresh.
#include <string>
#include <vector>

#include "study/sweep/journal.h"

namespace mf {

// Every rank's journal beside `path` (PATH.rank-R, R from 1), in rank order.
std::vector<std::string> rank_journals_beside(const std::string& path);

// Reads the journal at `path` (read_journal, which throws for it as it says) and every rank journal
// beside it into `others`: by mode and index, the models they ended that `path`'s journal does not
// record (a later line supersedes an earlier one). A rank journal that cannot be read throws the
// same.
JournalContents read_with_rank_journals(const std::string& path, const std::vector<Job>& jobs,
                                        const JournalRun& run, EndedModels* others);

// Sets aside every rank journal beside `path` of rank `from` or above (PATH.rank-R.previous): those
// of an earlier run's ranks that no rank of this run will write. Throws SystemError naming the
// file.
void set_aside_rank_journals(const std::string& path, int from);

}  // namespace mf
