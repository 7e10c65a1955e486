#pragma once
// The MPS that processes mode's workers run under (--mps, study/job.h MpsUse), for one run on the
// cuda backend: whether a control daemon serves them, which one, and the environment each worker is
// spawned with. The runner (study/runner.cpp) holds one while a processes-mode run lasts, made
// before any worker (the probe's too) starts, and every worker spawn (parent.cpp) adds its
// environment.
//
// - auto (as_found): the workers reach whatever daemon runs at this process's pipe directory
//   (runtime/mps.h); none is started.
// - on: that daemon, or one started in a private folder (runtime/mps_daemon.h), stopped when this
//   ends, whose pipe directory the workers are given.
// - off: the workers are given an empty private pipe directory: CUDA finds no daemon there and runs
//   without MPS, whatever daemon runs elsewhere.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/mps_daemon.h"
#include "study/job.h"

namespace mf {

// The worker's CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: its spec's "device" "sm_share", else --sm-share;
// absent when neither is given.
std::optional<int> sm_share_of(const Job& job, const RunOptions& options);

// Throws UserError, one line, when an SM share (--sm-share, or a spec's among `jobs`) is asked
// under --mps auto and no daemon runs at this process's pipe directory: the share is MPS's. For a
// check before the run starts; WorkerMps makes it too.
void check_share_has_mps(const RunOptions& options, std::span<const Job> jobs);

class WorkerMps {
 public:
  // Decides for `options.mps`. Throws UserError in one line: --mps on and a daemon that cannot
  // start (runtime/mps_daemon.h); an SM share (--sm-share, or a spec's among `jobs`) under --mps
  // auto with no daemon running, since the share is MPS's. SystemError when the private folder
  // cannot be made. One lives at a time.
  WorkerMps(const RunOptions& options, std::span<const Job> jobs);
  // Stops the daemon it started, removes its folder; never throws.
  ~WorkerMps();
  WorkerMps(const WorkerMps&) = delete;
  WorkerMps& operator=(const WorkerMps&) = delete;

  // The one the running run holds; null outside a processes-mode run on the cuda backend.
  static const WorkerMps* in_use();

  // "NAME=value" entries every worker's environment adds: CUDA_MPS_PIPE_DIRECTORY where the
  // workers are not to use this process's own; empty otherwise.
  const std::vector<std::string>& environment() const { return environment_; }
  // Whether the workers run under MPS (RunReport::mps).
  bool under_mps() const { return under_mps_; }
  // RunReport::mps_daemon: "found", "started", "kept_out", or absent (auto, and none runs).
  const std::optional<std::string>& daemon() const { return daemon_; }

 private:
  std::optional<MpsDaemon> started_;  // the daemon --mps on started
  std::string kept_out_;              // --mps off: the empty pipe directory
  std::vector<std::string> environment_;
  bool under_mps_ = false;
  std::optional<std::string> daemon_;
};

}  // namespace mf
