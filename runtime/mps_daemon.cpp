#include "runtime/mps_daemon.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "runtime/child_process.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/mps.h"

namespace mf {
namespace {

constexpr const char* kControlName = "nvidia-cuda-mps-control";
// How long stop() waits for the daemon to quit before it kills the guard: MPS quits at once when no
// client is left, and a run's workers have all ended by then.
constexpr double kQuitWait_s = 30;

// The guard ($1: the control program, $2: the private folder; the directories in its
// environment). It says "started", or "failed CODE" and what `-d` said; the daemon's output goes to
// a file, so that the daemon holds no pipe of ours. The daemon sees every GPU: MPS renumbers its
// clients' devices from those the daemon sees, and a client's CUDA_VISIBLE_DEVICES (a
// processes-mode worker's entry of this process's list) then means what it means without MPS.
constexpr const char* kGuard = R"(
unset CUDA_VISIBLE_DEVICES
"$1" -d </dev/null >"$2/start.log" 2>&1
code=$?
if [ "$code" -ne 0 ]; then echo "failed $code"; cat "$2/start.log"; rm -rf "$2"; exit 1; fi
echo started
while read -r _; do :; done
echo quit | "$1" >/dev/null 2>&1
rm -rf "$2"
)";

bool is_executable_file(const std::string& path) {
  struct stat status {};
  return stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode) &&
         access(path.c_str(), X_OK) == 0;
}

// PATH's folders, then the toolkit's and the driver's.
std::vector<std::string> control_folders() {
  std::vector<std::string> folders;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream list(path);
    for (std::string folder; std::getline(list, folder, ':');)
      if (!folder.empty()) folders.push_back(folder);
  }
  if (const char* home = std::getenv("CUDA_HOME"); home && *home)
    folders.push_back(std::string(home) + "/bin");
  for (const char* folder : {"/usr/local/cuda/bin", "/usr/bin", "/usr/sbin"})
    folders.push_back(folder);
  return folders;
}

std::string seconds_text(double s) {
  std::ostringstream text;
  text << s << " s";
  return text.str();
}

// Waits up to `seconds` for `fd` to be readable (or closed); false when the time ran out.
bool readable_within(int fd, double seconds) {
  const double deadline = clock_seconds() + seconds;
  for (double left = seconds; left > 0; left = deadline - clock_seconds()) {
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, int(left * 1000) + 1);
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR)
      throw SystemError(std::string("poll on the MPS daemon's guard failed: ") +
                        std::strerror(errno));
  }
  return false;
}

}  // namespace

std::string find_mps_control() {
  if (const char* given = std::getenv("MULTIFIT_MPS_CONTROL"); given && *given) {
    if (!is_executable_file(given))
      throw UserError(std::string("MULTIFIT_MPS_CONTROL=") + given +
                      " is not an executable file: give the path of " + kControlName);
    return given;
  }
  for (const std::string& folder : control_folders())
    if (const std::string path = folder + "/" + kControlName; is_executable_file(path)) return path;
  throw UserError(
      std::string("cannot start an MPS control daemon: ") + kControlName +
      " is not on PATH nor in $CUDA_HOME/bin, /usr/local/cuda/bin, /usr/bin or /usr/sbin (it comes with the NVIDIA driver; MULTIFIT_MPS_CONTROL may give its path)");
}

MpsDaemon::MpsDaemon(const std::string& control, double socket_wait_s) {
  // In /tmp, as MPS's own default: a socket's path holds at most 107 bytes, which a long TMPDIR
  // could exceed.
  char name[] = "/tmp/multifit-mps-XXXXXX";
  if (!mkdtemp(name))
    throw SystemError(std::string("cannot make a folder for an MPS control daemon in /tmp: ") +
                      std::strerror(errno));
  folder_ = name;
  pipe_directory_ = folder_ + "/pipe";
  const std::string log = folder_ + "/log";
  if (mkdir(pipe_directory_.c_str(), 0700) != 0 || mkdir(log.c_str(), 0700) != 0) {
    const int error = errno;
    std::filesystem::remove_all(folder_);
    throw SystemError("cannot make " + pipe_directory_ + " and " + log + ": " +
                      std::strerror(error));
  }
  try {
    guard_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{"/bin/sh", "-c", kGuard, "multifit-mps-guard", control, folder_},
        std::vector<std::string>{"CUDA_MPS_PIPE_DIRECTORY=" + pipe_directory_,
                                 "CUDA_MPS_LOG_DIRECTORY=" + log});
  } catch (...) {
    std::filesystem::remove_all(folder_);
    throw;
  }
  const std::string failed = "the MPS control daemon did not start: `" + control + " -d` ";
  if (!readable_within(guard_->output_fd(), socket_wait_s)) {
    guard_->kill_group(SIGKILL);  // `-d` hangs: the guard would never reach its pipe
    stop();
    throw UserError(failed + "did not return within " + seconds_text(socket_wait_s));
  }
  const std::optional<std::string> said = guard_->read_line();
  if (said != "started") {
    std::string output;  // what `-d` said, one line
    while (const auto line = guard_->read_line())
      if (!line->empty()) output += (output.empty() ? "" : " ") + *line;
    stop();
    const std::string code = said && said->starts_with("failed ") ? said->substr(7) : "?";
    throw UserError(failed + "exited with code " + code + (output.empty() ? "" : ": " + output));
  }
  for (const double deadline = clock_seconds() + socket_wait_s; clock_seconds() < deadline;) {
    if (mps_daemon_running(pipe_directory_)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop();
  throw UserError(failed + "returned, but no daemon answered at its control socket within " +
                  seconds_text(socket_wait_s));
}

MpsDaemon::~MpsDaemon() { stop(); }

void MpsDaemon::stop() {
  if (!guard_) return;
  guard_->close_input();
  try {
    // The guard's stdout closes as it ends; one that has not ended in time is killed.
    bool eof = false;
    while (!eof && readable_within(guard_->output_fd(), kQuitWait_s)) guard_->read_lines(&eof);
    if (!eof) guard_->kill_group(SIGKILL);
    guard_->wait();
  } catch (const SystemError&) {  // nothing left to do: the destructor kills and reaps it
  }
  guard_.reset();
  std::error_code ignored;
  std::filesystem::remove_all(folder_, ignored);
}

}  // namespace mf
