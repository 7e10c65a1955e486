#pragma once
// A child process with pipes to its stdin and stdout: in processes mode, the same binary started
// once per model (`multifit worker NAME`), so that a device fault in one model poisons only its own
// CUDA context. It is started with posix_spawn, never fork (forking a process whose CUDA has
// started leaves the child a broken copy of the driver's state) and never through a shell, with its
// environment (CUDA_VISIBLE_DEVICES) set before it runs. The parent writes the job to the child's
// stdin and reads lines from its stdout; the child's stderr is the parent's, so its progress lines
// reach the terminal.
//
// Not thread-safe: one owner per child; several children are read together with
// poll() over their output_fd().
#include <sys/types.h>

#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace mf {

// How a child ended, in words for a result document: "exited with code 3", "killed by signal 9
// (SIGKILL)".
struct ExitStatus {
  bool exited = false;  // exited normally,
  int code = 0;         // with this code
  int signal = 0;       // else killed by this signal
  std::string describe() const;
};

class ChildProcess {
 public:
  // Starts argv[0] (a path to an executable, not searched in PATH) with `argv`, the parent's
  // environment with `env` applied ("NAME=value" replaces NAME or adds it), stdin and stdout
  // connected to pipes and stderr inherited, in a process group of its own (a terminal's Ctrl-C
  // reaches only the parent, which decides what its children are told). The child starts with no
  // signal blocked, whatever the calling thread blocks. Throws SystemError naming the program and
  // errno's text when it cannot start (no such file, not executable: posix_spawn's error) or the
  // pipes cannot be made.
  ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env);
  // Kills (SIGKILL) a child still running and reaps it, so none is left a zombie; never throws.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Writes `text` whole to the child's stdin, blocking while the pipe is full. Returns false when
  // the child has gone (EPIPE) or the input was closed; the process never gets SIGPIPE for it.
  // Throws SystemError for any other write error.
  bool send(const std::string& text);
  // Closes the child's stdin: it reads EOF once it has read what was sent. Idempotent.
  void close_input();

  // The child's stdout, for poll() over several children.
  int output_fd() const { return output_fd_; }
  // After poll() said output_fd() is readable: reads once (at most 64 KiB, what a pipe holds) and
  // returns the lines now complete, without their '\n'; the rest of a line waits for the next read,
  // however long the line. Sets *eof once the child has closed its stdout; an unterminated last
  // line is then returned as it is. Throws SystemError when the read fails (EINTR is retried).
  std::vector<std::string> read_lines(bool* eof);
  // Blocks until the next complete line; nullopt at EOF. Throws as read_lines does.
  std::optional<std::string> read_line();

  // Waits for the child to end and returns how; idempotent. It does not close the input: a child
  // that reads its stdin to the end needs close_input() first. Throws SystemError when waitpid
  // fails (EINTR is retried), which happens only if something else reaped the child.
  ExitStatus wait();
  // Sends `signal` to the child if it has not been reaped (after that its pid may be another
  // process's). Throws SystemError when kill fails (an invalid signal).
  void kill(int signal);
  // The same to the child's process group (its own: the child and whatever it started).
  void kill_group(int signal);

  // What the child uses now, from /proc/PID/stat; absent once it has been reaped, or when /proc
  // cannot be read.
  struct Usage {
    double cpu_s = 0;  // user and system time, in seconds (the kernel counts in ticks of 10 ms)
    size_t threads = 0;
    size_t resident_bytes = 0;  // its resident set (VmRSS)
  };
  std::optional<Usage> usage() const;

 private:
  void read_some();  // one read() into buffer_, complete lines moved to lines_

  std::string program_;  // argv[0], for messages
  pid_t pid_ = -1;
  int input_fd_ = -1;
  int output_fd_ = -1;
  std::string buffer_;             // the start of a line not yet complete
  std::deque<std::string> lines_;  // complete lines not yet returned
  bool eof_ = false;
  std::optional<ExitStatus> status_;  // set once reaped
};

// The running program's own path (/proc/self/exe resolved), to spawn children of the same binary;
// or the path given to set_self_executable() by a program that embeds multifit (the Python package,
// whose own binary is python, names the multifit program it carries). Throws SystemError when it
// cannot be read.
std::string self_executable();
void set_self_executable(const std::string& path);

}  // namespace mf
