// ChildProcess (runtime/child_process.h). The children are /bin/sh scripts, only here, as small
// stand-ins for a worker: multifit itself never spawns through a shell. Every wait for a child's
// output that a bug could turn into a hang goes through poll with a timeout.
#include "runtime/child_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/error.h"
#include "test_support.h"

namespace mf {
namespace {

// A child running `script` under /bin/sh.
std::vector<std::string> sh(const std::string& script) { return {"/bin/sh", "-c", script}; }

bool readable_within(int fd, int milliseconds) {
  pollfd entry{fd, POLLIN, 0};
  return poll(&entry, 1, milliseconds) == 1;
}

TEST(ChildProcess, SendsToStdinAndReadsLinesFromStdout) {
  ChildProcess worker(sh("read line; echo got:$line; echo second"), {});
  ASSERT_TRUE(worker.send("hello\n"));
  EXPECT_EQ(worker.read_line(), "got:hello");
  EXPECT_EQ(worker.read_line(), "second");
  EXPECT_EQ(worker.read_line(), std::nullopt);
  EXPECT_EQ(worker.wait().describe(), "exited with code 0");
}

TEST(ChildProcess, EnvironmentOverridesReplaceAndAddToTheParents) {
  ASSERT_EQ(setenv("MF_TEST_EXISTING", "old", 1), 0);
  ASSERT_EQ(setenv("MF_TEST_INHERITED", "kept", 1), 0);
  ChildProcess worker(sh("echo \"$MF_TEST_EXISTING\"; env | grep -c ^MF_TEST_EXISTING=; "
                         "echo \"$CUDA_VISIBLE_DEVICES\"; echo \"$MF_TEST_INHERITED\""),
                      {"MF_TEST_EXISTING=new", "CUDA_VISIBLE_DEVICES=3"});
  unsetenv("MF_TEST_EXISTING");
  unsetenv("MF_TEST_INHERITED");
  EXPECT_EQ(worker.read_line(), "new");
  EXPECT_EQ(worker.read_line(), "1");  // replaced, not listed twice
  EXPECT_EQ(worker.read_line(), "3");
  EXPECT_EQ(worker.read_line(), "kept");
}

TEST(ChildProcess, ReportsAChildKilledMidRun) {
  // exec, so that no grandchild outlives the shell holding its stdout open.
  ChildProcess worker(sh("echo started; exec sleep 10"), {});
  ASSERT_EQ(worker.read_line(), "started");
  worker.kill(SIGKILL);
  EXPECT_EQ(worker.read_line(), std::nullopt);
  const ExitStatus status = worker.wait();
  EXPECT_FALSE(status.exited);
  EXPECT_EQ(status.signal, SIGKILL);
  EXPECT_EQ(status.describe(), "killed by signal 9 (SIGKILL)");
  worker.kill(SIGKILL);  // reaped: nothing is sent to a pid that may be another process's now
}

TEST(ChildProcess, ReportsTheExitCodeAndWaitsOnce) {
  ChildProcess worker(sh("exit 3"), {});
  const ExitStatus status = worker.wait();
  EXPECT_TRUE(status.exited);
  EXPECT_EQ(status.code, 3);
  EXPECT_EQ(status.describe(), "exited with code 3");
  EXPECT_EQ(worker.wait().describe(), "exited with code 3");
}

TEST(ChildProcess, DescribesSignalsWithoutAShortName) {
  EXPECT_EQ((ExitStatus{.signal = SIGTERM}).describe(), "killed by signal 15 (SIGTERM)");
  EXPECT_TRUE(test::contains((ExitStatus{.signal = SIGRTMIN + 1}).describe(), "Real-time signal"));
}

TEST(ChildProcess, AMissingProgramIsNamed) {
  const std::string message = test::user_error<SystemError>([] {
    ChildProcess worker({"/nonexistent/mf-no-such-worker", "--x"}, {});
  });
  EXPECT_TRUE(test::contains(message, "/nonexistent/mf-no-such-worker")) << message;
  EXPECT_TRUE(test::contains(message, "No such file or directory")) << message;
}

TEST(ChildProcess, SendingToAnExitedChildFailsWithoutSigpipe) {
  ChildProcess worker(sh("exit 0"), {});
  worker.wait();
  EXPECT_FALSE(worker.send("too late\n"));  // the test process is still here to check it
  sigset_t pending;
  sigpending(&pending);
  // not left pending for someone to be killed by later
  EXPECT_FALSE(sigismember(&pending, SIGPIPE));
  worker.close_input();
  EXPECT_FALSE(worker.send("closed\n"));
}

TEST(ChildProcess, ALongLineArrivesWhole) {
  constexpr size_t kLength = 3'000'000;  // a result document on one line, many pipe buffers long
  ChildProcess worker(
      sh("head -c " + std::to_string(kLength) + " /dev/zero | tr '\\0' a; echo; echo end"), {});
  std::vector<std::string> lines;
  for (bool eof = false; !eof;) {
    ASSERT_TRUE(readable_within(worker.output_fd(), 2000));
    for (std::string& line : worker.read_lines(&eof)) lines.push_back(std::move(line));
  }
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], std::string(kLength, 'a'));
  EXPECT_EQ(lines[1], "end");
}

TEST(ChildProcess, AnUnterminatedLastLineIsReturnedAtEof) {
  ChildProcess worker(sh("printf 'one\\ntwo'"), {});
  EXPECT_EQ(worker.read_line(), "one");
  EXPECT_EQ(worker.read_line(), "two");
  EXPECT_EQ(worker.read_line(), std::nullopt);
}

TEST(ChildProcess, WorkersDoNotInheritEachOthersPipes) {
  // Builtins only: a grandchild such as cat would outlive the shell killed on failure, holding its
  // pipes.
  ChildProcess first(sh("while read -r line; do :; done; echo eof"), {});
  // would hold first's pipe ends open, were they inherited
  ChildProcess second(sh("exec sleep 10"), {});
  first.close_input();
  ASSERT_TRUE(readable_within(first.output_fd(), 1000))
      << "the first child's stdin never reached EOF";
  EXPECT_EQ(first.read_line(), "eof");
  ASSERT_TRUE(readable_within(first.output_fd(), 1000))
      << "the first child's stdout never reached EOF";
  EXPECT_EQ(first.read_line(), std::nullopt);
}

TEST(ChildProcess, TheDestructorKillsAndReapsARunningChild) {
  pid_t pid = -1;
  const auto start = std::chrono::steady_clock::now();
  {
    ChildProcess worker(sh("exec sleep 10"), {});
    pid = worker.pid();
    ASSERT_EQ(::kill(pid, 0), 0);
  }
  // killed, not waited out
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // A zombie would still take signal 0 and could still be waited for.
  errno = 0;
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);
}

// The group kill reaches what the child started too (a worker's library might start a helper),
// where a kill of the child alone would leave the grandchild holding its stdout open.
TEST(ChildProcess, AGroupKillEndsTheChildAndWhatItStarted) {
  ChildProcess worker(sh("sleep 30 & echo started; wait"), {});
  ASSERT_EQ(worker.read_line(), "started");
  worker.kill_group(SIGKILL);
  ASSERT_TRUE(readable_within(worker.output_fd(), 5000)) << "the grandchild still holds the pipe";
  EXPECT_EQ(worker.read_line(), std::nullopt);
  EXPECT_EQ(worker.wait().describe(), "killed by signal 9 (SIGKILL)");
}

// What the child uses: its CPU time grows while it computes and stands while it is stopped; once
// reaped there is nothing to read.
TEST(ChildProcess, UsageShowsCpuTimeThreadsAndResidentMemory) {
  ChildProcess worker(sh("echo started; while :; do :; done"), {});
  ASSERT_EQ(worker.read_line(), "started");
  usleep(300000);
  const std::optional<ChildProcess::Usage> busy = worker.usage();
  ASSERT_TRUE(busy.has_value());
  EXPECT_GT(busy->cpu_s, 0.0);
  EXPECT_EQ(busy->threads, 1u);
  EXPECT_GT(busy->resident_bytes, 0u);
  worker.kill(SIGSTOP);
  usleep(100000);
  const double stopped = worker.usage()->cpu_s;
  usleep(300000);
  EXPECT_EQ(worker.usage()->cpu_s, stopped);
  worker.kill(SIGKILL);
  worker.wait();
  EXPECT_FALSE(worker.usage().has_value());
}

TEST(ChildProcess, SelfExecutableIsThisTestBinary) {
  const std::filesystem::path path = self_executable();
  EXPECT_TRUE(path.is_absolute());
  EXPECT_TRUE(std::filesystem::is_regular_file(path));
  EXPECT_EQ(path.filename(), "unit_tests");
}

}  // namespace
}  // namespace mf
