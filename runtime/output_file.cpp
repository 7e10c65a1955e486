#include "runtime/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

#include "runtime/error.h"

namespace mf {
namespace {

int standard_output = STDOUT_FILENO;  // where `-` writes: stdout, or its copy once taken

// Writes all of `content` to `fd`: 0, or the errno of the write that failed.
int write_all(int fd, const std::string& content) {
  for (size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n >= 0)
      done += size_t(n);
    else if (errno != EINTR)
      return errno;
  }
  return 0;
}

[[noreturn]] void cannot_write(const std::string& where, const std::string& what, int error) {
  throw SystemError(where + ": cannot write " + what + ": " +
                    std::generic_category().message(error));
}

}  // namespace

void write_output_file(const std::string& path, const std::string& what,
                       const std::string& content) {
  if (is_standard_output(path)) {
    std::fflush(stdout);  // what was printed before comes first
    if (const int error = write_all(standard_output, content))
      cannot_write("standard output", what, error);
    return;
  }
  const std::string temporary = path + "." + std::to_string(getpid()) + ".tmp";
  const int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd < 0) cannot_write(path, what, errno);
  int error = write_all(fd, content);
  if (!error && ::fsync(fd) != 0) error = errno;  // a file system that allocates late fails here
  if (::close(fd) != 0 && !error) error = errno;
  if (!error && std::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error) {
    ::unlink(temporary.c_str());
    cannot_write(path, what, error);
  }
}

void take_standard_output() {
  const int copy = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
  if (copy < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    throw SystemError(std::string("cannot set standard output aside for -: ") +
                      std::generic_category().message(errno));
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // lines printed to it stay in order with stderr's
  standard_output = copy;
}

}  // namespace mf
