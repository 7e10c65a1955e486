// One sweep over MPI ranks (study/ranks/run_over_ranks.h), with this machine's Open MPI: `mpirun
// --oversubscribe -np 3` gives, model by model, the numbers of a run in one process, with every
// model's rank and each rank's figures; a rank killed with SIGKILL leaves its models to --resume;
// what cannot run across ranks is refused once, with the document written. Skipped where mpirun is
// missing; a build without MPI must say so under mpirun.
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <set>
#include <thread>

#include "cli_support.h"

namespace {

using namespace cli_test;

// `learning_rates` x `seeds` models of 20 -> 64 -> 1 on synthetic data, `epochs` epochs each.
json small_grid(int learning_rates, int seeds, int epochs) {
  json sweep = {
      {"name", "mpi-sweep"},
      {"base",
       {{"name", "m"},
        {"data", "synthetic:binary"},
        {"input", 20},
        {"layers",
         {{{"units", 64}, {"activation", "relu"}}, {{"units", 1}, {"activation", "sigmoid"}}}},
        {"loss", "binary_crossentropy"},
        {"optimizer", {{"name", "adam"}}},
        {"fit", {{"epochs", epochs}, {"batch_size", 64}}},
        {"memory", {{"limit", "4MiB"}}}}},
      {"grid", {{"learning_rate", json::array()}, {"seed", json::array()}}}};
  for (int i = 0; i < learning_rates; ++i)
    sweep["grid"]["learning_rate"].push_back(0.001 * (i + 1));
  for (int i = 0; i < seeds; ++i) sweep["grid"]["seed"].push_back(i + 1);
  return sweep;
}

// What two runs of a model must agree on, wherever it ran: its name, status, every epoch's metrics,
// its test metrics.
json numbers_of(const json& model) {
  json epochs = json::array();
  for (const json& e : model["epochs"])
    epochs.push_back({e["loss"], e["accuracy"], e["val_loss"], e["val_accuracy"]});
  return {model["name"], model["status"], epochs, model["test_loss"], model["test_accuracy"]};
}

bool have_mpirun() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }

class Mpi : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    if (!have_mpirun())
      GTEST_SKIP() << "no mpirun on this machine (scripts/setup.sh installs openmpi-bin)";
    with_mpi_ = contains(multifit("--version").out, "with MPI");
  }
  std::string sweep(const json& doc) const {
    std::ofstream(path("sweep.json")) << doc.dump(2);
    return quoted(path("sweep.json"));
  }
  // `mpirun -np RANKS multifit ARGS`, as root where the tests run as root (a container, CI). A job
  // that ends with an error is torn down at once: Open MPI waits 2 s by default (its
  // odls_base_sigkill_timeout) for ranks that have already ended quietly.
  Result mpirun(int ranks, const std::string& args) const {
    return multifit(args,
                    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                    "OMPI_MCA_rmaps_base_oversubscribe=1 "
                    "OMPI_MCA_odls_base_sigkill_timeout=0 mpirun --oversubscribe -np " +
                        std::to_string(ranks) + " ");
  }
  void expect_same_numbers(const json& got, const json& want) const {
    ASSERT_EQ(got["models"].size(), want["models"].size());
    for (size_t i = 0; i < want["models"].size(); ++i)
      EXPECT_EQ(numbers_of(got["models"][i]), numbers_of(want["models"][i]))
          << want["models"][i]["name"];
  }
  bool with_mpi_ = false;
};

TEST_F(Mpi, ThreeRanksGiveTheNumbersOfOneProcessInEachMode) {
  if (!with_mpi_) GTEST_SKIP() << "this build has no MPI (MULTIFIT_MPI=OFF)";
  // 8 models of some 30 ms: every rank gets some
  const std::string grid = sweep(small_grid(2, 4, 100));
  const Result one =
      multifit("run " + grid + " --backend cpu --quiet --json " + quoted(path("one.json")));
  ASSERT_EQ(one.rc, 0) << one.err;
  for (const std::string mode : {"serial", "streams", "processes", "packed"}) {
    SCOPED_TRACE(mode);
    const std::string out = path(mode + ".json");
    const Result r = mpirun(
        3, "run " + grid + " --backend cpu --quiet --mode " + mode + " --json " + quoted(out));
    ASSERT_EQ(r.rc, 0) << r.err;
    const json doc = result(mode + ".json");
    expect_same_numbers(doc, result("one.json"));
    // Every model names the rank that trained it and its host; each rank's figures add up to the
    // sweep.
    std::set<int> ranks;
    for (const json& m : doc["models"]) {
      ASSERT_TRUE(m["mpi_rank"].is_number()) << m["name"];
      ranks.insert(m["mpi_rank"].get<int>());
      EXPECT_FALSE(m["host"].get<std::string>().empty());
    }
    EXPECT_LE(*ranks.rbegin(), 2);
    EXPECT_GE(ranks.size(), 2u) << "the work was spread over the ranks";
    ASSERT_EQ(doc["ranks"].size(), 3u);
    int models = 0;
    for (size_t r = 0; r < 3; ++r) {
      const json& part = doc["ranks"][r];
      EXPECT_EQ(part["index"], r);
      EXPECT_GT(part["wall_s"].get<double>(), 0);
      models += part["models"].get<int>();
      int counted = 0;  // the models that name this rank
      for (const json& m : doc["models"]) counted += m["mpi_rank"] == int(r);
      EXPECT_EQ(part["models"], counted);
      if (counted > 0) {
        EXPECT_GT(part["samples_per_s"].get<double>(), 0);
      }
    }
    EXPECT_EQ(models, 8);
    EXPECT_GT(doc["samples_per_s"].get<double>(), 0);
  }
}

// The pids of this user's processes whose environment holds `entry` (OMPI_COMM_WORLD_RANK=1).
std::vector<pid_t> processes_with(const std::string& entry) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  while (dirent* e = proc ? readdir(proc) : nullptr) {
    const pid_t pid = pid_t(std::atoi(e->d_name));
    if (pid <= 0) continue;
    const std::string env = read_file("/proc/" + std::string(e->d_name) + "/environ");
    if (env.find(std::string(1, '\0') + entry + std::string(1, '\0')) != std::string::npos ||
        env.starts_with(entry + std::string(1, '\0')))
      if (contains(read_file("/proc/" + std::string(e->d_name) + "/cmdline"), "multifit"))
        found.push_back(pid);
  }
  if (proc) closedir(proc);
  return found;
}

TEST_F(Mpi, AKilledRanksModelsFinishOnResume) {
  if (!with_mpi_) GTEST_SKIP() << "this build has no MPI (MULTIFIT_MPI=OFF)";
  // 8 models of about half a second each: the kill lands mid-run
  const std::string grid = sweep(small_grid(2, 4, 4000));
  const std::string out = quoted(path("r.json"));
  const std::string tag =
      "MF_TEST_RUN=" + std::to_string(getpid()) + "_" + std::to_string(std::rand());
  // In the background: mpirun passes this test's tag down to its ranks, which the kill finds them
  // by.
  const std::string command =
      "(" + tag +
      " OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -x MF_TEST_RUN "
      "--oversubscribe -np 3 " +
      quoted(MULTIFIT_BIN) + " run " + grid + " --backend cpu --quiet --json " + out + " >" +
      quoted(path("killed.out")) + " 2>&1; echo $? >" + quoted(path("killed.rc")) + ") &";
  ASSERT_EQ(std::system(command.c_str()), 0);
  // Once rank 1 has journaled a model, it is killed: its model in flight is lost, the job ends.
  const auto lines = [&](const std::string& file) {
    const std::string text = read_file(path(file));
    return std::count(text.begin(), text.end(), '\n');
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (lines("r.json.journal.rank-1") < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_GE(lines("r.json.journal.rank-1"), 2) << read_file(path("killed.out"));
  std::vector<pid_t> rank1;
  for (pid_t pid : processes_with(tag))
    if (contains(read_file("/proc/" + std::to_string(pid) + "/environ"),
                 std::string("OMPI_COMM_WORLD_RANK=1") + '\0'))
      rank1.push_back(pid);
  ASSERT_EQ(rank1.size(), 1u);
  kill(rank1[0], SIGKILL);
  while (read_file(path("killed.rc")).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_NE(read_file(path("killed.rc")), "0\n") << read_file(path("killed.out"));
  EXPECT_FALSE(fs::exists(path("r.json"))) << "the job ended with its rank: no document";

  // Resumed over two ranks: the journals' models are taken as they ended, the rest trained.
  const Result resumed = mpirun(2, "run " + grid + " --backend cpu --quiet --resume --json " + out);
  ASSERT_EQ(resumed.rc, 0) << resumed.err;
  const json doc = result("r.json");
  EXPECT_GE(doc["resumed_models"].get<int>(), 1);
  EXPECT_LT(doc["resumed_models"].get<int>(), 8);
  const Result one =
      multifit("run " + grid + " --backend cpu --quiet --json " + quoted(path("one.json")));
  ASSERT_EQ(one.rc, 0) << one.err;
  expect_same_numbers(doc, result("one.json"));
  EXPECT_TRUE(fs::exists(path("r.json.journal.rank-1.previous")));  // the killed run's, set aside
}

// SIGTERM to rank 0 alone: its model in flight is interrupted, and the other ranks train the rest.
TEST_F(Mpi, ASignalledRankStopsAloneAndTheOthersTrainTheRest) {
  if (!with_mpi_) GTEST_SKIP() << "this build has no MPI (MULTIFIT_MPI=OFF)";
  const std::string grid = sweep(small_grid(2, 4, 3000));  // 8 models of some 0.4 s
  const std::string tag = "MF_TEST_RUN=" + std::to_string(getpid()) + "_term";
  const std::string command =
      "(" + tag +
      " OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -x MF_TEST_RUN "
      "--oversubscribe -np 3 " +
      quoted(MULTIFIT_BIN) + " run " + grid + " --backend cpu --quiet --json " +
      quoted(path("t.json")) + " >" + quoted(path("t.out")) + " 2>&1; echo $? >" +
      quoted(path("t.rc")) + ") &";
  ASSERT_EQ(std::system(command.c_str()), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  const auto lines = [&] {
    const std::string text = read_file(path("t.json.journal"));
    return std::count(text.begin(), text.end(), '\n');
  };
  while (lines() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // Rank 0 has ended its first model and starts its next at once: the signal lands mid-model, not
  // before its first step (a model stopped there is not started, with no rank, as a model never
  // handed out would be).
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  std::vector<pid_t> rank0;
  for (pid_t pid : processes_with(tag))
    if (contains(read_file("/proc/" + std::to_string(pid) + "/environ"),
                 std::string("OMPI_COMM_WORLD_RANK=0") + '\0'))
      rank0.push_back(pid);
  ASSERT_EQ(rank0.size(), 1u) << read_file(path("t.out"));
  kill(rank0[0], SIGTERM);
  while (read_file(path("t.rc")).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // Every model trained, but rank 0's in flight when the signal came, if it had one then (it may be
  // between shares): none is left never started, which is what the others not being served would
  // give.
  const json doc = result("t.json");
  int ok = 0;
  for (const json& m : doc["models"])
    if (m["status"] == "ok")
      ++ok;
    else
      EXPECT_EQ(m["mpi_rank"], 0) << m["name"] << ": only rank 0's model in flight is interrupted: "
                                  << m["error"];
  EXPECT_GE(ok, 7) << read_file(path("t.out"));
  EXPECT_EQ(read_file(path("t.rc")), ok == 8 ? "0\n" : "130\n");
}

// --save-best over ranks: each keeps its own best, and rank 0 chooses the run's from all of them.
TEST_F(Mpi, TheBestOfTheWholeRunAreKeptFromEveryRank) {
  if (!with_mpi_) GTEST_SKIP() << "this build has no MPI (MULTIFIT_MPI=OFF)";
  const std::string grid = sweep(small_grid(2, 4, 100));
  const Result r = mpirun(3, "run " + grid + " --backend cpu --quiet --save-best 3 " +
                                 quoted(path("best")) + " --json " + quoted(path("r.json")));
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = result("r.json");
  const json best = json::parse(read_file(path("best/best.json")));
  ASSERT_EQ(best["models"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(best["models"][i]["name"], doc["ranking"][i]);
    EXPECT_TRUE(fs::exists(path("best/" + best["models"][i]["weights"].get<std::string>())));
  }
  for (const auto& entry : fs::directory_iterator(path("best")))
    EXPECT_FALSE(entry.path().filename().string().starts_with(".staging")) << entry.path();
}

TEST_F(Mpi, AShardOverRanksMergesFromItsRanksJournals) {
  if (!with_mpi_) GTEST_SKIP() << "this build has no MPI (MULTIFIT_MPI=OFF)";
  const std::string grid = sweep(small_grid(2, 3, 2));
  ASSERT_EQ(mpirun(2, "run " + grid + " --backend cpu --quiet --shard 0/2 --json " +
                          quoted(path("p0.json")))
                .rc,
            0);
  ASSERT_TRUE(fs::exists(path("p0.json.journal.rank-1")));
  ASSERT_EQ(multifit("run " + grid + " --backend cpu --quiet --shard 1/2 --json " +
                     quoted(path("p1.json")))
                .rc,
            0);
  // Shard 0 by its ranks' journals (as a killed job leaves them), shard 1 by its document.
  const Result merged = multifit("merge " + quoted(path("p0.json.journal")) + " " +
                                 quoted(path("p0.json.journal.rank-1")) + " " +
                                 quoted(path("p1.json")) + " --json " + quoted(path("all.json")));
  ASSERT_EQ(merged.rc, 0) << merged.err;
  ASSERT_EQ(
      multifit("run " + grid + " --backend cpu --quiet --json " + quoted(path("one.json"))).rc, 0);
  expect_same_numbers(result("all.json"), result("one.json"));
}

TEST_F(Mpi, WhatCannotRunAcrossRanksIsSaidOnceWithTheDocumentWritten) {
  if (!with_mpi_) GTEST_SKIP() << "this build has no MPI (MULTIFIT_MPI=OFF)";
  const std::string grid = sweep(small_grid(1, 2, 1));
  const Result automatic =
      mpirun(2, "run " + grid + " --backend cpu --mode auto --json " + quoted(path("a.json")));
  const auto errors = [](const std::string& err) {
    size_t n = 0;
    for (size_t at = err.find("multifit: error:"); at != std::string::npos;
         at = err.find("multifit: error:", at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(automatic.rc, 2);
  EXPECT_EQ(errors(automatic.err), 1u) << automatic.err;
  EXPECT_TRUE(contains(automatic.err, "--mode auto is not available under mpirun"))
      << automatic.err;
  const Result trace =
      mpirun(2, "run " + grid + " --backend cpu --trace " + quoted(path("t.json")));
  EXPECT_EQ(trace.rc, 2);
  EXPECT_EQ(errors(trace.err), 1u) << trace.err;
  EXPECT_TRUE(contains(trace.err, "--trace is not available under mpirun")) << trace.err;
  // A rank given other options (or a stale sweep) would mix two runs in one document.
  const Result mixed = multifit(
      "run " + grid + " --backend cpu --json " + quoted(path("m.json")) + " : -np 1 " +
          quoted(MULTIFIT_BIN) + " run " + grid + " --backend cpu --epochs 5 --json " +
          quoted(path("m.json")),
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 1 ");
  EXPECT_EQ(mixed.rc, 2);
  EXPECT_EQ(errors(mixed.err), 1u) << mixed.err;
  EXPECT_TRUE(contains(mixed.err, "rank 1 (")) << mixed.err;
  EXPECT_TRUE(contains(mixed.err, "every rank must be given the same sweep file")) << mixed.err;
  EXPECT_TRUE(contains(result("m.json")["error"].get<std::string>(), "rank 1 ("));
  EXPECT_TRUE(result("m.json")["models"].empty());
  const Result train =
      mpirun(2, "train " + quoted(example("binary-classifier.json")) + " --backend cpu");
  EXPECT_EQ(train.rc, 2);
  EXPECT_EQ(errors(train.err), 1u) << train.err;
  std::ofstream(path("broken.json")) << "{\"name\": ";
  const Result broken = mpirun(
      2, "run " + quoted(path("broken.json")) + " --backend cpu --json " + quoted(path("b.json")));
  EXPECT_EQ(broken.rc, 2);
  const std::string said = "broken.json";
  EXPECT_EQ(errors(broken.err), 1u) << broken.err;
  EXPECT_TRUE(contains(broken.err, said)) << broken.err;
  EXPECT_TRUE(contains(result("b.json")["error"].get<std::string>(), said));
}

TEST_F(Mpi, ABuildWithoutMpiSaysSoUnderMpirun) {
  if (with_mpi_) GTEST_SKIP() << "this build has MPI: the build with MULTIFIT_MPI=OFF checks this";
  const Result r = mpirun(
      2, "run " + sweep(small_grid(1, 2, 1)) + " --backend cpu --json " + quoted(path("x.json")));
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "this multifit was built without MPI")) << r.err;
}

}  // namespace
