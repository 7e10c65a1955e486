#pragma once
// Where this process stands in a run: alone (rank 0 of 1), or one rank of an MPI job (mpirun,
// srun). Every difference between the two is here: who writes (rank 0, "the writer": it reads the
// journal to resume, prints, and writes the outputs), how the ranks agree to start, where each
// rank's journal and staging folder go (study/rank_path.h), and how a mode's run spreads
// (study/ranks/run_over_ranks.h).
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/mpi_world.h"
#include "study/ranks/mode_run.h"

namespace mf {

class RunRank {
 public:
  // Joins the MPI world when launched by mpirun with more than one rank; else alone. Throws
  // UserError when launched by mpirun and this build has no MPI (runtime/mpi_world.h).
  RunRank();

  bool under_mpi() const { return world_.has_value(); }
  int rank() const { return world_ ? world_->rank() : 0; }
  int size() const { return world_ ? world_->size() : 1; }
  bool writer() const { return rank() == 0; }

  // Under mpirun: this rank's GPU (--devices's, or every visible one's, by its rank on its node)
  // and, without --threads, its share of its node's cores. Alone: `options` as they are.
  void fit_options(RunOptions& options, bool threads_given) const;
  // Whether every rank can start: each gives the error that stops it ("" for none) and what it is
  // to run (`run`: the sweep's fingerprint, backend, mode, shard, --save-best), which must be rank
  // 0's. Returns the first error, rank 0's before the others', naming the rank and its host; ""
  // when all can start. Alone: `mine`.
  std::string agree_to_start(const std::string& mine, const nlohmann::json& run);
  // One mode's run of `jobs`, finished for the study's document (study/ranks/mode_run.h): in this
  // process, or over the ranks (rank 0 gets the whole run's report, the others one with no
  // models). *exit_code takes the worst of this process's models' codes.
  RunReport run(ModeKind mode, const std::vector<Job>& jobs, const RunOptions& options,
                const std::atomic<bool>& stop, int* exit_code, const StudyRecord& record,
                const RunPlace& place);
  // This rank's copy of a path the ranks share (a journal, a staging folder): PATH for rank 0.
  std::string own(const std::string& path) const;
  // Every rank's copy of `path`, by rank.
  std::vector<std::string> every_ranks(const std::string& path) const;
  // Under mpirun, ends every rank after `failure` on this one (the others would wait on it for
  // ever); alone, does nothing (the caller rethrows).
  void abort_job_after(const std::exception& failure);

 private:
  std::optional<MpiWorld> world_;
};

}  // namespace mf
