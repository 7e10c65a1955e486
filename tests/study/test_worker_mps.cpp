// What processes mode's workers are given for --mps (study/modes/processes/worker_mps.h), around a
// pipe directory made here: empty, or with a control socket that listens as a daemon's does.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "runtime/error.h"
#include "study/modes/processes/worker_mps.h"

namespace mf {
namespace {

namespace fs = std::filesystem;

class WorkerMpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/mf-worker-mps-XXXXXX";
    ASSERT_NE(mkdtemp(name), nullptr);
    dir_ = name;
    const char* saved = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
    saved_ = saved ? std::optional<std::string>(saved) : std::nullopt;
    setenv("CUDA_MPS_PIPE_DIRECTORY", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
    if (saved_)
      setenv("CUDA_MPS_PIPE_DIRECTORY", saved_->c_str(), 1);
    else
      unsetenv("CUDA_MPS_PIPE_DIRECTORY");
    fs::remove_all(dir_);
  }
  void listen_as_a_daemon() {
    fd_ = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string control = dir_ + "/control";
    std::memcpy(address.sun_path, control.c_str(), control.size() + 1);
    ASSERT_EQ(bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
    ASSERT_EQ(listen(fd_, 4), 0);
  }
  static RunOptions with(MpsUse use, std::optional<int> share = std::nullopt) {
    RunOptions options;
    options.mps = use;
    options.sm_share = share;
    return options;
  }
  std::string dir_;
  std::optional<std::string> saved_;
  int fd_ = -1;
};

TEST_F(WorkerMpsTest, OffGivesTheWorkersAnEmptyPipeDirectoryOfTheirOwn) {
  listen_as_a_daemon();
  std::string kept_out;
  {
    const WorkerMps mps(with(MpsUse::off), {});
    EXPECT_EQ(WorkerMps::in_use(), &mps);
    EXPECT_FALSE(mps.under_mps());
    EXPECT_EQ(mps.daemon(), "kept_out");
    ASSERT_EQ(mps.environment().size(), 1u);
    const std::string entry = mps.environment()[0];
    ASSERT_TRUE(entry.starts_with("CUDA_MPS_PIPE_DIRECTORY=")) << entry;
    kept_out = entry.substr(entry.find('=') + 1);
    EXPECT_NE(kept_out, dir_);
    EXPECT_TRUE(fs::is_directory(kept_out));
    EXPECT_TRUE(fs::is_empty(kept_out));
  }
  EXPECT_EQ(WorkerMps::in_use(), nullptr);
  EXPECT_FALSE(fs::exists(kept_out));
}

TEST_F(WorkerMpsTest, AutoAndOnTakeTheDaemonThatRunsAsItIs) {
  listen_as_a_daemon();
  for (const MpsUse use : {MpsUse::as_found, MpsUse::on}) {
    const WorkerMps mps(with(use, 50), {});
    EXPECT_TRUE(mps.under_mps());
    EXPECT_EQ(mps.daemon(), "found");
    EXPECT_TRUE(mps.environment().empty());  // the workers inherit this process's pipe directory
  }
}

TEST_F(WorkerMpsTest, AutoWithoutADaemonIsNoMpsAndRefusesAShare) {
  {
    const WorkerMps mps(with(MpsUse::as_found), {});
    EXPECT_FALSE(mps.under_mps());
    EXPECT_EQ(mps.daemon(), std::nullopt);
    EXPECT_TRUE(mps.environment().empty());
  }
  EXPECT_THROW(WorkerMps(with(MpsUse::as_found, 50), {}), UserError);
  Job job;
  job.name = "a";
  job.spec.emplace();
  job.spec->device_share.sm_share = 20;
  try {
    check_share_has_mps(with(MpsUse::as_found), std::span(&job, 1));
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "model \"a\": \"device\": {\"sm_share\": 20} needs MPS "
              "(CUDA_MPS_ACTIVE_THREAD_PERCENTAGE), and no MPS control daemon answers at " +
                  dir_ + "/control: give --mps on to start one for the run, or drop the share");
  }
}

TEST(SmShareOf, IsTheModelsOwnElseTheRunsElseNone) {
  Job job;
  job.spec.emplace();
  RunOptions options;
  EXPECT_EQ(sm_share_of(job, options), std::nullopt);
  options.sm_share = 30;
  EXPECT_EQ(sm_share_of(job, options), 30);
  job.spec->device_share.sm_share = 60;
  EXPECT_EQ(sm_share_of(job, options), 60);
}

}  // namespace
}  // namespace mf
