#include "runtime/mps.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace mf {

std::string mps_pipe_directory() {
  const char* dir = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  return dir && *dir ? dir : "/tmp/nvidia-mps";
}

bool mps_daemon_running(const std::string& pipe_directory) {
  const std::string control = pipe_directory + "/control";
  struct stat status {};
  if (stat(control.c_str(), &status) != 0) return false;
  // a named pipe: no way to ask it without writing to it
  if (S_ISFIFO(status.st_mode)) return true;
  sockaddr_un address{};
  if (!S_ISSOCK(status.st_mode) || control.size() >= sizeof address.sun_path) return false;
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, control.c_str(), control.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool answered =
      connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 ||
      errno == EPROTOTYPE;
  close(fd);
  return answered;
}

}  // namespace mf
