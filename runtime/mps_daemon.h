#pragma once
// An MPS control daemon that a run starts for its own processes and stops at its end (--mps on
// where none runs): `nvidia-cuda-mps-control -d`, with its pipe and log directories
// (CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY) in a private folder of its own, so that it
// serves only the processes given that pipe directory and meets no other daemon.
//
// The daemon outlives whoever started it (-d detaches it), and MPS has no way to end it when that
// process dies. So a guard process starts and stops it: a shell that starts the daemon, reads its
// stdin (a pipe from this process) until it closes, then quits the daemon (`echo quit |
// nvidia-cuda-mps-control`, with the same directories) and removes the folder. The pipe closes
// when stop() closes it, and also when this process ends however it ends (Ctrl-C twice, a crash,
// SIGKILL), so the daemon never outlives its run. The guard has a process group of its own
// (runtime/child_process.h): a terminal's Ctrl-C does not reach it.
#include <memory>
#include <string>

namespace mf {

class ChildProcess;

// The control program to run: MULTIFIT_MPS_CONTROL when set (a path, which must be an executable
// file), else nvidia-cuda-mps-control on PATH, in the toolkit's bin folder (CUDA_HOME, then
// /usr/local/cuda) or the driver's (/usr/bin, /usr/sbin). Throws UserError in one line when there
// is none, naming where it looked.
std::string find_mps_control();

class MpsDaemon {
 public:
  // Starts a daemon with `control` (a path) and waits up to `socket_wait_s` seconds for its control
  // socket to answer (runtime/mps.h). Throws UserError, one line, when it cannot start: `control
  // -d` exits with an error (its code and what it said), says nothing within the wait, or its
  // socket does not answer in time (then the guard quits whatever started). SystemError when the
  // folder or the guard cannot be made.
  explicit MpsDaemon(const std::string& control = find_mps_control(), double socket_wait_s = 5);
  // stop(); never throws.
  ~MpsDaemon();
  MpsDaemon(const MpsDaemon&) = delete;
  MpsDaemon& operator=(const MpsDaemon&) = delete;

  // The daemon's CUDA_MPS_PIPE_DIRECTORY: what a process must be given to use it.
  const std::string& pipe_directory() const { return pipe_directory_; }
  // Quits the daemon and removes its folder, waiting for the guard that does both; idempotent,
  // never throws.
  void stop();

 private:
  std::string folder_;          // the private folder: pipe/, log/
  std::string pipe_directory_;  // folder_/pipe
  std::unique_ptr<ChildProcess> guard_;
};

}  // namespace mf
