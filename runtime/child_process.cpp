#include "runtime/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "runtime/error.h"

namespace mf {
namespace {

std::string errno_text(int error) { return std::strerror(error); }

// The parent's environment with `overrides` applied: "NAME=value" replaces NAME or adds it.
std::vector<std::string> child_environment(const std::vector<std::string>& overrides) {
  std::vector<std::string> result;
  for (char** entry = environ; *entry; ++entry) result.emplace_back(*entry);
  for (const std::string& assignment : overrides) {
    const std::string prefix = assignment.substr(0, assignment.find('=') + 1);  // "NAME="
    std::erase_if(result, [&](const std::string& entry) { return entry.starts_with(prefix); });
    result.push_back(assignment);
  }
  return result;
}

// The NULL-terminated array posix_spawn takes; it points into `strings`.
std::vector<char*> c_array(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (std::string& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

// Writes all of `text` to `fd` with SIGPIPE blocked in this thread, so that a pipe without a reader
// fails the write with EPIPE instead of killing the process; the SIGPIPE that write raised is taken
// off the pending set before the mask is restored (the way git and libcurl do it). A process-wide
// SIG_IGN would be simpler but would change the behaviour of the whole program. Returns false on
// EPIPE; any other error is returned in *error.
bool write_without_sigpipe(int fd, const std::string& text, int* error) {
  sigset_t sigpipe, old_mask, pending;
  sigemptyset(&sigpipe);
  sigaddset(&sigpipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &sigpipe, &old_mask);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE);  // someone else's: leave it

  *error = 0;
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n >= 0) {
      done += size_t(n);
    } else if (errno != EINTR) {
      *error = errno;
      break;
    }
  }
  if (*error == EPIPE && !was_pending) {
    const timespec zero{};
    while (sigtimedwait(&sigpipe, nullptr, &zero) == -1 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return *error != EPIPE;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

std::string ExitStatus::describe() const {
  if (exited) return "exited with code " + std::to_string(code);
  const char* abbreviation = sigabbrev_np(signal);  // "KILL"; none for real-time signals
  const std::string name =
      abbreviation ? std::string("SIG") + abbreviation : std::string(strsignal(signal));
  return "killed by signal " + std::to_string(signal) + " (" + name + ")";
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env)
    : program_(argv.at(0)) {
  // Every end is close-on-exec, made so atomically (pipe2): a child spawned by another thread at
  // the same moment inherits none of them, and a child holding another's stdin would keep it from
  // EOF. The child's own ends become its 0 and 1 through dup2, which clears the flag on the copy.
  int input[2], output[2];
  if (pipe2(input, O_CLOEXEC) != 0)
    throw SystemError("cannot start " + program_ + ": " + errno_text(errno));
  if (pipe2(output, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(input[0]);
    ::close(input[1]);
    throw SystemError("cannot start " + program_ + ": " + errno_text(error));
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output[1], STDOUT_FILENO);
  // The child inherits the calling thread's signal mask; a thread that blocks SIGTERM or SIGINT for
  // itself must not pass that on to a child that should die of them. It starts a process group of
  // its own, so that a terminal's Ctrl-C reaches the parent only, which tells its children once.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);

  std::vector<std::string> arguments = argv;
  std::vector<std::string> environment = child_environment(env);
  const int error = posix_spawn(&pid_, program_.c_str(), &actions, &attributes,
                                c_array(arguments).data(), c_array(environment).data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(input[0]);  // the child's ends, now its own
  ::close(output[1]);
  input_fd_ = input[1];
  output_fd_ = output[0];
  if (error != 0) {
    close_fd(input_fd_);
    close_fd(output_fd_);
    throw SystemError("cannot start " + program_ + ": " + errno_text(error));
  }
}

ChildProcess::~ChildProcess() {
  close_fd(input_fd_);
  close_fd(output_fd_);
  if (status_) return;
  ::kill(pid_, SIGKILL);
  while (waitpid(pid_, nullptr, 0) == -1 && errno == EINTR) {
  }
}

bool ChildProcess::send(const std::string& text) {
  if (input_fd_ < 0) return false;
  int error = 0;
  if (!write_without_sigpipe(input_fd_, text, &error)) return false;
  if (error != 0)
    throw SystemError("cannot write to " + program_ + " (pid " + std::to_string(pid_) +
                      "): " + errno_text(error));
  return true;
}

void ChildProcess::close_input() { close_fd(input_fd_); }

void ChildProcess::read_some() {
  if (eof_) return;
  char chunk[64 * 1024];
  ssize_t n;
  while ((n = ::read(output_fd_, chunk, sizeof chunk)) == -1 && errno == EINTR) {
  }
  if (n < 0)
    throw SystemError("cannot read from " + program_ + " (pid " + std::to_string(pid_) +
                      "): " + errno_text(errno));
  if (n == 0) {
    eof_ = true;
    if (!buffer_.empty()) lines_.push_back(std::move(buffer_));
    buffer_.clear();
    return;
  }
  // Only the new bytes are searched: what the buffer held had no '\n', and a multi-MB line must not
  // be scanned again at every read.
  size_t start = 0;
  size_t newline = buffer_.size();
  buffer_.append(chunk, size_t(n));
  while ((newline = buffer_.find('\n', newline)) != std::string::npos) {
    lines_.push_back(buffer_.substr(start, newline - start));
    start = ++newline;
  }
  buffer_.erase(0, start);
}

std::vector<std::string> ChildProcess::read_lines(bool* eof) {
  read_some();
  *eof = eof_;
  std::vector<std::string> result(std::make_move_iterator(lines_.begin()),
                                  std::make_move_iterator(lines_.end()));
  lines_.clear();
  return result;
}

std::optional<std::string> ChildProcess::read_line() {
  while (lines_.empty() && !eof_) read_some();
  if (lines_.empty()) return std::nullopt;
  std::string line = std::move(lines_.front());
  lines_.pop_front();
  return line;
}

ExitStatus ChildProcess::wait() {
  if (status_) return *status_;
  int raw = 0;
  while (waitpid(pid_, &raw, 0) == -1) {
    if (errno != EINTR)
      throw SystemError("cannot wait for " + program_ + " (pid " + std::to_string(pid_) +
                        "): " + errno_text(errno));
  }
  ExitStatus status;
  status.exited = WIFEXITED(raw);
  if (status.exited)
    status.code = WEXITSTATUS(raw);
  else
    status.signal = WTERMSIG(raw);
  status_ = status;
  return status;
}

void ChildProcess::kill(int signal) {
  if (status_) return;
  if (::kill(pid_, signal) != 0)
    throw SystemError("cannot signal " + program_ + " (pid " + std::to_string(pid_) +
                      "): " + errno_text(errno));
}

void ChildProcess::kill_group(int signal) {
  if (status_) return;
  // the group's id is the child's pid (POSIX_SPAWN_SETPGROUP with 0)
  if (::kill(-pid_, signal) != 0)
    throw SystemError("cannot signal the process group of " + program_ + " (pid " +
                      std::to_string(pid_) + "): " + errno_text(errno));
}

std::optional<ChildProcess::Usage> ChildProcess::usage() const {
  if (status_) return std::nullopt;
  std::ifstream file("/proc/" + std::to_string(pid_) + "/stat");
  std::string stat;
  if (!std::getline(file, stat)) return std::nullopt;
  // "pid (comm) state ...": comm may hold spaces and parentheses, so the fields start after the
  // last ')'.
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(paren + 2));
  std::vector<std::string> f{std::istream_iterator<std::string>(fields),
                             std::istream_iterator<std::string>()};
  // proc(5) numbers the fields from 1 with pid; f[0] is field 3 (state).
  constexpr size_t kUtime = 14 - 3, kStime = 15 - 3, kThreads = 20 - 3, kRss = 24 - 3;
  if (f.size() <= kRss) return std::nullopt;
  const double tick = double(sysconf(_SC_CLK_TCK));
  return Usage{double(std::stoull(f[kUtime]) + std::stoull(f[kStime])) / tick,
               size_t(std::stoull(f[kThreads])),
               size_t(std::stoull(f[kRss])) * size_t(sysconf(_SC_PAGESIZE))};
}

namespace {
std::string& embedder_executable() {
  static std::string path;
  return path;
}
}  // namespace

void set_self_executable(const std::string& path) { embedder_executable() = path; }

std::string self_executable() {
  if (!embedder_executable().empty()) return embedder_executable();
  std::error_code error;
  const std::filesystem::path path = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error)
    throw SystemError("cannot find this program's own path (/proc/self/exe): " + error.message());
  return path.string();
}

}  // namespace mf
