// runtime/mps_daemon.h against a stand-in for nvidia-cuda-mps-control (tests/fake/): with -d it
// leaves a daemon listening at $CUDA_MPS_PIPE_DIRECTORY/control, which ends when a client sends it
// "quit"; without -d it is that client. The daemon writes its pid where the test can find it, so
// that the test sees it end, and a log in its log directory, so that the test sees it was given
// one.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "runtime/child_process.h"
#include "runtime/error.h"
#include "runtime/mps.h"
#include "runtime/mps_daemon.h"

namespace mf {
namespace {

namespace fs = std::filesystem;

const std::string kFakeControl = std::string(MF_SOURCE_DIR) + "/tests/fake/nvidia-cuda-mps-control";

bool ended(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");  // a zombie has ended too
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  return close != std::string::npos && text.substr(close + 2, 1) == "Z";
}

template <class Condition>
bool within(double seconds, Condition condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

class FakeControl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("python3 -c 'import socket' >/dev/null 2>&1") != 0)
      GTEST_SKIP() << "the stand-in daemon needs python3";
    char name[] = "/tmp/mf-mps-control-XXXXXX";
    ASSERT_NE(mkdtemp(name), nullptr);
    dir_ = name;
    control_ = kFakeControl;
    setenv("FAKE_MPS_PID_FILE", pid_file().c_str(), 1);
  }
  void TearDown() override {
    if (const pid_t pid = daemon_pid(); pid > 0 && !ended(pid)) kill(pid, SIGKILL);
    unsetenv("FAKE_MPS_REFUSE");
    unsetenv("FAKE_MPS_NO_SOCKET");
    unsetenv("FAKE_MPS_PID_FILE");
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string pid_file() const { return dir_ + "/daemon.pid"; }
  pid_t daemon_pid() const {
    pid_t pid = 0;
    std::ifstream(pid_file()) >> pid;
    return pid;
  }
  std::string dir_, control_;
};

TEST_F(FakeControl, StartsADaemonInAPrivateFolderAndStopsIt) {
  setenv("CUDA_VISIBLE_DEVICES", "3", 1);  // this process's GPUs: the daemon must see every one
  MpsDaemon daemon(control_);
  unsetenv("CUDA_VISIBLE_DEVICES");
  const std::string pipe = daemon.pipe_directory();
  EXPECT_TRUE(pipe.starts_with("/tmp/multifit-mps-")) << pipe;
  EXPECT_NE(pipe, mps_pipe_directory());
  EXPECT_TRUE(mps_daemon_running(pipe));
  const fs::path folder = fs::path(pipe).parent_path();
  std::ifstream log(folder / "log" / "control.log");  // its log directory was given
  std::string said;
  std::getline(log, said);
  EXPECT_EQ(said, "started, CUDA_VISIBLE_DEVICES unset");
  EXPECT_EQ(fs::status(folder).permissions() & fs::perms::all, fs::perms::owner_all);
  const pid_t pid = daemon_pid();
  ASSERT_GT(pid, 0);
  EXPECT_FALSE(ended(pid));

  daemon.stop();
  EXPECT_TRUE(within(5, [&] { return ended(pid); })) << "the daemon was not told to quit";
  EXPECT_FALSE(fs::exists(folder));
  daemon.stop();  // idempotent
}

TEST_F(FakeControl, TheDestructorStopsIt) {
  std::string folder;
  {
    MpsDaemon daemon(control_);
    folder = fs::path(daemon.pipe_directory()).parent_path();
  }
  EXPECT_TRUE(within(5, [&] { return ended(daemon_pid()); }));
  EXPECT_FALSE(fs::exists(folder));
}

TEST_F(FakeControl, ADaemonThatExitsWithAnErrorIsOneLineWithItsCodeAndWhatItSaid) {
  setenv("FAKE_MPS_REFUSE", "1", 1);
  try {
    MpsDaemon daemon(control_);
    FAIL() << "started";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "the MPS control daemon did not start: `" + control_ +
                                         " -d` exited with code 1: An instance of this daemon "
                                         "is already running");
  }
}

TEST_F(FakeControl, ADaemonWhoseSocketNeverAnswersIsAnError) {
  setenv("FAKE_MPS_NO_SOCKET", "1", 1);
  try {
    MpsDaemon daemon(control_, 0.3);
    FAIL() << "started";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "the MPS control daemon did not start: `" + control_ +
                  " -d` returned, but no daemon answered at its control socket within 0.3 s");
  }
}

TEST_F(FakeControl, AControlProgramThatIsMissingIsAnError) {
  try {
    MpsDaemon daemon(dir_ + "/missing");
    FAIL() << "started";
  } catch (const UserError& e) {  // the shell's 127, and its words
    EXPECT_TRUE(std::string(e.what()).starts_with("the MPS control daemon did not start: `" + dir_ +
                                                  "/missing -d` exited with code 127: "))
        << e.what();
  }
}

// The runner of the next test: started as a child of it (this binary, this test alone), it starts a
// daemon, says its pipe directory and waits to be killed.
TEST(MpsDaemonRunner, DISABLED_IsKilled) {
  if (!std::getenv("MF_TEST_MPS_RUNNER"))
    GTEST_SKIP() << "only as the child of FakeControl.ARunnerKilledLeavesNoDaemon";
  MpsDaemon daemon(kFakeControl);
  std::cout << daemon.pipe_directory() << std::endl;
  pause();
}

TEST_F(FakeControl, ARunnerKilledLeavesNoDaemon) {
  ChildProcess runner({self_executable(), "--gtest_also_run_disabled_tests",
                       "--gtest_filter=MpsDaemonRunner.DISABLED_IsKilled"},
                      {"MF_TEST_MPS_RUNNER=1"});
  std::optional<std::string> pipe;
  while ((pipe = runner.read_line()) && !pipe->starts_with("/tmp/multifit-mps-")) {
  }
  ASSERT_TRUE(pipe) << "the runner never said its daemon's pipe directory";
  EXPECT_TRUE(mps_daemon_running(*pipe));
  const pid_t pid = daemon_pid();
  ASSERT_GT(pid, 0);

  runner.kill(SIGKILL);
  runner.wait();
  EXPECT_TRUE(within(5, [&] { return ended(pid); })) << "the daemon outlived its runner";
  EXPECT_TRUE(within(5, [&] { return !fs::exists(fs::path(*pipe).parent_path()); }));
}

TEST(FindMpsControl, IsMultifitMpsControlWhenSet) {
  setenv("MULTIFIT_MPS_CONTROL", "/bin/sh", 1);
  EXPECT_EQ(find_mps_control(), "/bin/sh");
  setenv("MULTIFIT_MPS_CONTROL", "/nonexistent/nvidia-cuda-mps-control", 1);
  try {
    find_mps_control();
    FAIL() << "found";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "MULTIFIT_MPS_CONTROL=/nonexistent/nvidia-cuda-mps-control is not an executable "
              "file: give the path of nvidia-cuda-mps-control");
  }
  unsetenv("MULTIFIT_MPS_CONTROL");
}

TEST(FindMpsControl, LooksOnPathThenInTheToolkitsAndDriversFolders) {
  char name[] = "/tmp/mf-mps-path-XXXXXX";
  ASSERT_NE(mkdtemp(name), nullptr);
  const std::string dir = name, control = dir + "/nvidia-cuda-mps-control";
  const std::string saved_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  std::ofstream(control) << "#!/bin/sh\n";
  setenv("PATH", ("/nonexistent:" + dir).c_str(), 1);
  EXPECT_FALSE(std::getenv("MULTIFIT_MPS_CONTROL"));
  fs::permissions(control, fs::perms::owner_read);  // not executable: passed over
  const bool installed = fs::exists("/usr/local/cuda/bin/nvidia-cuda-mps-control") ||
                         fs::exists("/usr/bin/nvidia-cuda-mps-control") ||
                         fs::exists("/usr/sbin/nvidia-cuda-mps-control");
  if (!installed) {
    EXPECT_THROW(find_mps_control(), UserError);
  }
  fs::permissions(control, fs::perms::owner_all);
  EXPECT_EQ(find_mps_control(), control);
  setenv("PATH", saved_path.c_str(), 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mf
