#include "apps/multifit/run_rank.h"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "runtime/device.h"
#include "runtime/machine_resources.h"
#include "study/ranks/messages.h"
#include "study/rank_path.h"

namespace mf {

RunRank::RunRank() {
  if (launched_by_mpi()) world_.emplace();
  if (world_ && world_->size() == 1) world_.reset();  // a world of one is one process
}

void RunRank::fit_options(RunOptions& options, bool threads_given) const {
  if (!world_) return;
  if (options.backend.kind == BackendKind::cuda) {  // before any CUDA context is made
    std::vector<int> devices = options.devices;
    if (devices.empty())
      for (const DeviceInfo& d : query_devices().devices) devices.push_back(d.index);
    const int local = launcher_local_rank().value_or(world_->local_rank());
    // none: each model says so
    if (!devices.empty()) options.devices = {devices[size_t(local) % devices.size()]};
  }
  // Ranks that Open MPI did not bind apart (it binds up to 2 a node by default) would each take
  // every core of their mask.
  if (!threads_given) {
    const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
    options.backend.threads =
        std::min(options.backend.threads, std::max(1, cores / world_->local_size()));
  }
}

// A stale copy of the sweep on one node, or an option given to some ranks only, would mix models of
// two runs in one document: every rank must be to run rank 0's run.
std::string RunRank::agree_to_start(const std::string& mine, const nlohmann::json& run) {
  if (!world_) return mine;
  const Ready me{host_name(), mine, run};
  const std::vector<std::string> each = world_->gather(message_text(me));
  std::string first = mine;
  for (size_t r = 1; r < each.size() && first.empty(); ++r) {
    const Ready rank = message_from<Ready>(each[r]);
    const std::string who = "rank " + std::to_string(r) + " (" + rank.host + "): ";
    if (!rank.error.empty())
      first = who + rank.error;
    else if (rank.run != run)
      first =
          who + "it is to run " + rank.run.dump() + ", but rank 0 " + run.dump() +
          ": every rank must be given the same sweep file, with the same contents, and the same options";
  }
  return world_->broadcast(first);
}

RunReport RunRank::run(ModeKind mode, const std::vector<Job>& jobs, const RunOptions& options,
                       const std::atomic<bool>& stop, int* exit_code, const StudyRecord& record,
                       const RunPlace& place) {
  return run_in_study(mode, jobs, options, stop, exit_code, record, place,
                      world_ ? &*world_ : nullptr);
}

std::string RunRank::own(const std::string& path) const { return rank_sibling(path, rank()); }

std::vector<std::string> RunRank::every_ranks(const std::string& path) const {
  std::vector<std::string> paths;
  for (int r = 0; r < size(); ++r) paths.push_back(rank_sibling(path, r));
  return paths;
}

void RunRank::abort_job_after(const std::exception& failure) {
  if (!world_) return;
  std::fprintf(stderr,
               "multifit: failure: rank %d: %s; the job is aborted (--resume finishes it)\n",
               world_->rank(), failure.what());
  world_->abort(1);
}

}  // namespace mf
