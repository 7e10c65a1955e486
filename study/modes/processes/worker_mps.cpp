#include "study/modes/processes/worker_mps.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "runtime/error.h"
#include "runtime/mps.h"

namespace mf {
namespace {

const WorkerMps* current = nullptr;  // set and cleared by the runner's thread, before and after
                                     // its workers are spawned

// What asks for an SM share, as the user gave it: "--sm-share 50", or a model's spec; "" for none.
std::string share_asked(const RunOptions& options, std::span<const Job> jobs) {
  if (options.sm_share) return "--sm-share " + std::to_string(*options.sm_share);
  for (const Job& job : jobs)
    if (job.spec && job.spec->device_share.sm_share)
      return "model \"" + job.name +
             "\": \"device\": {\"sm_share\": " + std::to_string(*job.spec->device_share.sm_share) +
             "}";
  return "";
}

}  // namespace

std::optional<int> sm_share_of(const Job& job, const RunOptions& options) {
  if (job.spec && job.spec->device_share.sm_share) return job.spec->device_share.sm_share;
  return options.sm_share;
}

void check_share_has_mps(const RunOptions& options, std::span<const Job> jobs) {
  if (options.mps != MpsUse::as_found) return;
  const std::string asked = share_asked(options, jobs), pipe = mps_pipe_directory();
  if (!asked.empty() && !mps_daemon_running(pipe))
    throw UserError(asked + " needs MPS (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE), and no MPS control " +
                    "daemon answers at " + pipe + "/control: give --mps on to start one for " +
                    "the run, or drop the share");
}

WorkerMps::WorkerMps(const RunOptions& options, std::span<const Job> jobs) {
  const bool running = mps_daemon_running(mps_pipe_directory());
  if (options.mps == MpsUse::off) {
    // Short, in /tmp, as runtime/mps_daemon.cpp's: CUDA looks for its control socket in it.
    char name[] = "/tmp/multifit-no-mps-XXXXXX";
    if (!mkdtemp(name))
      throw SystemError(std::string("--mps off: cannot make an empty pipe directory in /tmp: ") +
                        std::strerror(errno));
    kept_out_ = name;
    environment_ = {"CUDA_MPS_PIPE_DIRECTORY=" + kept_out_};
    daemon_ = "kept_out";
  } else if (running) {
    under_mps_ = true;
    daemon_ = "found";
  } else if (options.mps == MpsUse::on) {
    try {
      started_.emplace();
    } catch (const UserError& e) {
      throw UserError(std::string("--mps on: ") + e.what() +
                      "; --mps auto runs the workers without MPS");
    }
    environment_ = {"CUDA_MPS_PIPE_DIRECTORY=" + started_->pipe_directory()};
    under_mps_ = true;
    daemon_ = "started";
  } else {
    check_share_has_mps(options, jobs);
  }
  current = this;
}

WorkerMps::~WorkerMps() {
  current = nullptr;
  if (kept_out_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(kept_out_, ignored);
}

const WorkerMps* WorkerMps::in_use() { return current; }

}  // namespace mf
