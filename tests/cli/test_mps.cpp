// --mps and --sm-share end to end, with a stand-in for nvidia-cuda-mps-control (tests/fake/): the
// daemon a run starts, finds or keeps its workers from, as its document records it, each model's
// share, and the refusals that need a running daemon to decide. On this machine the workers find no
// GPU and fail, which the document records too; what is checked is the run's MPS around them.
#include <sys/types.h>

#include <csignal>
#include <fstream>

#include "cli_support.h"

namespace cli_test {
namespace {

const std::string kControl = std::string(MF_SOURCE_DIR) + "/tests/fake/nvidia-cuda-mps-control";
const std::string kPair = quoted(example("seed-pair.json"));

class Mps : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    // A GPU's CUDA would take the stand-in for a real daemon and talk MPS's protocol to it.
    if (fs::exists("/dev/nvidiactl"))
      GTEST_SKIP() << "a GPU is here: the workers' CUDA would connect to the stand-in daemon";
    if (std::system("python3 -c 'import socket' >/dev/null 2>&1") != 0)
      GTEST_SKIP() << "the stand-in daemon needs python3";
    fs::create_directories(path("pipe"));
  }
  void TearDown() override {
    if (fs::exists(path("pipe/control")))  // the daemon a test started itself
      std::system(("echo quit | " + env() + quoted(kControl)).c_str());
    Cli::TearDown();
  }

  // The environment of every command: the pipe directory of this test (so that no daemon of the
  // machine's is found), the stand-in, and where its daemon writes its pid.
  std::string env() const {
    return "CUDA_MPS_PIPE_DIRECTORY=" + quoted(path("pipe")) +
           " MULTIFIT_MPS_CONTROL=" + quoted(kControl) +
           " FAKE_MPS_PID_FILE=" + quoted(path("pid")) + " ";
  }
  Result run(const std::string& flags, const std::string& more_env = "") const {
    return multifit("run " + flags + " --backend cuda --mode processes --quiet --json " +
                        quoted(path("r.json")),
                    env() + more_env);
  }
  // A daemon running at the test's pipe directory before the run, as a machine's own would be.
  void start_a_daemon() {
    ASSERT_EQ(std::system((env() + quoted(kControl) + " -d").c_str()), 0);
    // The stand-in makes its pipe, then writes its pid: wait for both (a pid read before it is
    // written is 0, and kill(0, 0) would ask about this test's own process group).
    for (int i = 0; i < 250 && !(fs::exists(path("pipe/control")) && daemon_pid() > 0); ++i)
      usleep(20000);
    ASSERT_TRUE(fs::exists(path("pipe/control")));
    ASSERT_GT(daemon_pid(), 0) << "the stand-in daemon wrote no pid";
  }
  pid_t daemon_pid() const {
    pid_t pid = 0;
    std::ifstream(path("pid")) >> pid;
    return pid;
  }
  // A sweep of the binary classifier with its own share of 40 and the regressor without one.
  std::string sweep_with_a_share() const {
    spec_from("binary-classifier.json", {{"device", {{"sm_share", 40}}}}, "shared.json");
    std::ofstream(path("sweep.json"))
        << json{{"name", "shares"}, {"models", {path("shared.json"), example("regressor.json")}}};
    return quoted(path("sweep.json"));
  }
};

bool ended(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  return stat.substr(stat.rfind(')') + 2, 1) == "Z";  // a zombie has ended too
}

TEST_F(Mps, OnStartsADaemonForTheRunAndStopsItAtItsEnd) {
  const Result r = run(sweep_with_a_share() + " --mps on --sm-share 30");
  const json doc = result("r.json");
  EXPECT_EQ(doc["mps"], true) << r.err;
  EXPECT_EQ(doc["mps_daemon"], "started");
  ASSERT_EQ(doc["models"].size(), 2u);
  EXPECT_EQ(doc["models"][0]["sm_share"], 40);  // its spec's own
  EXPECT_EQ(doc["models"][1]["sm_share"], 30);  // --sm-share's
  const pid_t pid = daemon_pid();
  ASSERT_GT(pid, 0) << "no daemon was started";
  for (int i = 0; i < 250 && !ended(pid); ++i) usleep(20000);
  EXPECT_TRUE(ended(pid)) << "the daemon outlived its run";
  EXPECT_FALSE(fs::exists(path("pipe/control")));  // the machine's pipe directory was left alone
}

TEST_F(Mps, AutoAndOnUseTheDaemonThatRuns) {
  start_a_daemon();
  const pid_t pid = daemon_pid();
  for (const std::string mps : {"auto", "on"}) {
    const Result r = run(kPair + " --mps " + mps + " --sm-share 25");
    const json doc = result("r.json");
    EXPECT_EQ(doc["mps"], true) << mps << ": " << r.err;
    EXPECT_EQ(doc["mps_daemon"], "found") << mps;
    EXPECT_EQ(doc["models"][0]["sm_share"], 25) << mps;
    EXPECT_FALSE(ended(pid)) << mps << ": a daemon the run found was stopped";
  }
}

TEST_F(Mps, OffKeepsTheWorkersFromTheDaemonThatRuns) {
  start_a_daemon();
  const Result r = run(kPair + " --mps off");
  const json doc = result("r.json");
  EXPECT_EQ(doc["mps"], false) << r.err;
  EXPECT_EQ(doc["mps_daemon"], "kept_out");
  EXPECT_TRUE(doc["models"][0]["sm_share"].is_null());
  EXPECT_FALSE(ended(daemon_pid()));
}

TEST_F(Mps, AutoWithoutADaemonIsNoMps) {
  const Result r = run(kPair);
  const json doc = result("r.json");
  EXPECT_EQ(doc["mps"], false) << r.err;
  EXPECT_TRUE(doc["mps_daemon"].is_null());
  EXPECT_FALSE(fs::exists(path("pid"))) << "auto started a daemon";
}

TEST_F(Mps, ADaemonThatCannotStartIsOneLine) {
  const Result r = run(kPair + " --mps on", "FAKE_MPS_REFUSE=1 ");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "multifit: error: --mps on: the MPS control daemon did not start: `" + kControl +
                       " -d` exited with code 1: An instance of this daemon is already running; "
                       "--mps auto runs the workers without MPS\n");
}

TEST_F(Mps, AControlProgramThatIsNotThereIsOneLine) {
  const Result r = run(kPair + " --mps on", "MULTIFIT_MPS_CONTROL=" + quoted(path("none")) + " ");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "multifit: error: --mps on: MULTIFIT_MPS_CONTROL=" + path("none") +
                       " is not an executable file: give the path of nvidia-cuda-mps-control; "
                       "--mps auto runs the workers without MPS\n");
}

TEST_F(Mps, AShareWithoutADaemonIsRefusedBeforeAnyModelStarts) {
  const std::string no_daemon = ", and no MPS control daemon answers at " + path("pipe") +
                                "/control: give --mps on to start one for the run, or drop the "
                                "share\n";
  Result r = run(kPair + " --sm-share 30");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "multifit: error: --sm-share 30 needs MPS (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE)" +
                       no_daemon);
  const json doc = result("r.json");  // written all the same, with no model trained
  EXPECT_EQ(doc["models"].size(), 0u);
  EXPECT_NE(doc["error"].get<std::string>().find("--sm-share 30 needs MPS"), std::string::npos);
  r = run(sweep_with_a_share());
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(
      r.err,
      "multifit: error: model \"binary-classifier\": \"device\": {\"sm_share\": 40} needs MPS "
      "(CUDA_MPS_ACTIVE_THREAD_PERCENTAGE)" +
          no_daemon);
}

}  // namespace
}  // namespace cli_test
