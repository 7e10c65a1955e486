#pragma once
// The MPI world of a run launched by mpirun (or srun): this process's rank among the world's, its
// rank among those on its node, and the few exchanges the ranks' runner needs
// (study/ranks/run_over_ranks.h), each message a string (JSON). Open MPI is optional at build time
// (MULTIFIT_MPI, found by CMake): a build without it still knows when an MPI launcher started it,
// and says it cannot join.
//
// Only the thread that made the world calls MPI (MPI_THREAD_FUNNELED): other threads of the
// process train, and the world's thread hands them work.
#include <optional>
#include <string>
#include <vector>

namespace mf {

// Whether this build has MPI.
bool built_with_mpi();

// Whether an MPI launcher started this process as one of a world of several: its environment names
// a world (Open MPI's OMPI_COMM_WORLD_SIZE, PMI's PMI_SIZE, or PMIx's PMIX_RANK, which srun sets),
// of more than one process where the size is named.
bool launched_by_mpi();

// This process's rank in the world as the launcher named it (OMPI_COMM_WORLD_RANK, PMI_RANK,
// PMIX_RANK), read before MPI starts; absent when none is set.
std::optional<int> launcher_rank();

// Whether this process speaks for the job: it was not started by an MPI launcher, or it is rank 0.
// A mistake every rank makes alike (a bad flag, a sweep that cannot be read) is said by rank 0
// alone, and the other ranks end quietly with exit code 0, so that mpirun's code is rank 0's and
// Open MPI does not end the job (rank 0 with it) before rank 0 has said why.
bool speaks_for_the_job();

// This process's rank on its node as the launcher named it (OMPI_COMM_WORLD_LOCAL_RANK,
// MPI_LOCALRANKID, SLURM_LOCALID), read before MPI or CUDA starts; absent when none is set.
std::optional<int> launcher_local_rank();

class MpiWorld {
 public:
  // Joins the world (MPI_Init_thread). Throws UserError when this build has no MPI, or when MPI
  // cannot give funneled threads.
  MpiWorld();
  ~MpiWorld();  // MPI_Finalize
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Among the ranks on this node (MPI_Comm_split_type, shared memory): this one's place and their
  // count.
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }

  void send(int to, const std::string& message);
  // The rank a message is waiting from, if any (MPI_Iprobe): never blocks.
  std::optional<int> waiting();
  std::string receive(int from);  // blocks until one comes
  // Every rank gives `mine`; rank 0 gets them all, by rank, the others nothing.
  std::vector<std::string> gather(const std::string& mine);
  // Rank 0's `message` to every rank (the others' argument is ignored).
  std::string broadcast(const std::string& message);
  // Ends every rank of the job with `code` (MPI_Abort): for a failure after which the others would
  // wait on this one for ever.
  [[noreturn]] void abort(int code);

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
};

}  // namespace mf
