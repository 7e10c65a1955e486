// runtime/mps.h against the three things a pipe directory can hold: nothing, a control socket that
// a daemon listens on, and the socket a killed daemon left behind.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "runtime/mps.h"

namespace mf {
namespace {

class PipeDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/mf-mps-XXXXXX";
    ASSERT_NE(mkdtemp(name), nullptr);
    dir_ = name;
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
    std::filesystem::remove_all(dir_);
  }
  // A UNIX stream socket bound at DIR/control; listening, or closed as a killed daemon leaves it.
  void bind_control(bool listening) {
    fd_ = socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd_, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string path = dir_ + "/control";
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    ASSERT_EQ(bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0)
        << std::strerror(errno);
    if (listening) {
      ASSERT_EQ(listen(fd_, 4), 0);
    } else {
      close(fd_);
      fd_ = -1;
    }
  }
  std::string dir_;
  int fd_ = -1;
};

TEST_F(PipeDirectory, WithoutAControlSocketThereIsNoDaemon) {
  EXPECT_FALSE(mps_daemon_running(dir_));
  EXPECT_FALSE(mps_daemon_running(dir_ + "/missing"));
}

TEST_F(PipeDirectory, AListeningControlSocketIsADaemon) {
  bind_control(true);
  EXPECT_TRUE(mps_daemon_running(dir_));
}

TEST_F(PipeDirectory, TheSocketOfADaemonThatDiedIsNone) {
  bind_control(false);
  EXPECT_FALSE(mps_daemon_running(dir_));
}

TEST(MpsPipeDirectory, IsCudasVariableOrItsDefault) {
  const char* saved = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string kept = saved ? saved : "";
  setenv("CUDA_MPS_PIPE_DIRECTORY", "/run/mps-7", 1);
  EXPECT_EQ(mps_pipe_directory(), "/run/mps-7");
  setenv("CUDA_MPS_PIPE_DIRECTORY", "", 1);
  EXPECT_EQ(mps_pipe_directory(), "/tmp/nvidia-mps");
  if (saved)
    setenv("CUDA_MPS_PIPE_DIRECTORY", kept.c_str(), 1);
  else
    unsetenv("CUDA_MPS_PIPE_DIRECTORY");
}

}  // namespace
}  // namespace mf
