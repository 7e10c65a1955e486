#pragma once
// A part of a sweep: the models at places I, I + N, I + 2N, ... (a --shard I/N, as a Slurm job
// array's task I of N runs it; an MPI rank's share is the same cut), and what names the sweep the
// part is of, so that `multifit merge` (study/sweep/merge.h) can check that parts belong together.
// Round robin rather than contiguous blocks: a grid's later axes vary fastest, so every part gets a
// like mix of the sweep's models (sizes, epochs) and the parts take about as long as each other.
#include <cstddef>
#include <vector>

#include "study/job.h"
#include "study/report/report.h"

namespace mf {

// The jobs at places `first`, `first + step`, ... of `jobs` (the whole sweep's, in sweep order),
// each keeping its index in the sweep. `step` >= 1; `first` >= jobs.size() gives none.
std::vector<Job> every_nth_job(const std::vector<Job>& jobs, size_t first, size_t step);
inline std::vector<Job> shard_jobs(const std::vector<Job>& jobs, const Shard& shard) {
  return every_nth_job(jobs, shard.index, shard.count);
}

// The job whose place in the sweep is `index`, in `jobs` (all of a sweep's or a part of them, in
// sweep order); nullptr when that place is not among them.
const Job* job_at(const std::vector<Job>& jobs, size_t index);

// The sweep's name and model count, and the fingerprint of `all_jobs` (every model of the sweep, as
// make_jobs made them: overrides applied): each model's name and spec (its own data source among
// its keys), or its entry's error. --data is left out: a shard may read the data from wherever its
// machine keeps it (a node's local disk, $TMPDIR), and that is still the same sweep.
SweepIdentity identify_sweep(const Sweep& sweep, const std::vector<Job>& all_jobs);

}  // namespace mf
