#pragma once
// Whether CUDA's Multi-Process Service is running for this process's GPUs. Without it, the kernels
// of separate processes never run at the same time on a GPU: it time-slices their contexts. With
// it, the processes' work goes through one shared context and may run at once. A CUDA program uses
// MPS when, at its start, it can reach the MPS control daemon through the daemon's `control` socket
// in the pipe directory (CUDA_MPS_PIPE_DIRECTORY, by default /tmp/nvidia-mps).
#include <string>

namespace mf {

// CUDA_MPS_PIPE_DIRECTORY, or /tmp/nvidia-mps where it is unset or empty.
std::string mps_pipe_directory();

// Whether a control daemon answers at `pipe_directory`/control: the socket accepts a connection (a
// socket of another type than a stream also counts: something listens). A missing directory or
// socket, or a socket left by a daemon that died (the connection is refused), is no daemon.
bool mps_daemon_running(const std::string& pipe_directory = mps_pipe_directory());

}  // namespace mf
