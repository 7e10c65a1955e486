// run --save-best K DIR end to end: in every mode the files kept are the first K of the document's
// ranking, each loads with train --load to the test metrics the document reports for its model (an
// independent check that the right weights were kept), the staging folder is gone; models that fail
// or diverge are never kept; thousands of models leave no more than K files staged at once; a
// killed or interrupted run resumed keeps its best; wrong input is one line before anything trains.
#include <unistd.h>

#include <set>

#include "cli_support.h"

namespace {

using namespace cli_test;

class SaveBest : public Cli {
 protected:
  std::string sweep(const json& doc, const std::string& file = "sweep.json") const {
    std::ofstream(path(file)) << doc.dump(2);
    return quoted(path(file));
  }
  static std::set<std::string> files_in(const fs::path& folder) {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder))
      names.insert(entry.path().filename().string());
    return names;
  }
  static const json& model_named(const json& doc, const std::string& name) {
    for (const json& m : doc["models"])
      if (m["name"] == name) return m;
    ADD_FAILURE() << "no model " << name;
    static const json none;
    return none;
  }
  // Every model best.json lists is the ranking's at its place, with the document's value, and its
  // files evaluate with train --load to the document's test metrics for it.
  void expect_the_rankings_best(const json& doc, const std::string& dir, size_t k) const {
    SCOPED_TRACE(dir);
    const json index = json::parse(read_file(fs::path(dir) / "best.json"));
    EXPECT_EQ(index["rank_by"], doc["rank_by"]);
    EXPECT_EQ(index["k"], k);
    ASSERT_EQ(index["models"].size(), std::min(k, doc["ranking"].size()));
    std::set<std::string> expected = {"best.json"};
    for (size_t i = 0; i < index["models"].size(); ++i) {
      const json& kept = index["models"][i];
      const std::string name = doc["ranking"][i];
      EXPECT_EQ(kept["rank"], i + 1);
      ASSERT_EQ(kept["name"], name);
      const json& m = model_named(doc, name);
      EXPECT_EQ(kept["index"], m["index"]);
      EXPECT_EQ(kept["settings"], m["settings"]);
      const std::string by = doc["rank_by"];
      EXPECT_EQ(kept["value"],
                by == "val_accuracy" || by == "val_loss" ? m["epochs"].back()[by] : m[by])
          << name;
      EXPECT_EQ(kept["weights"], name + ".weights");
      EXPECT_EQ(kept["spec"], name + ".spec.json");
      expected.insert({name + ".weights", name + ".spec.json"});
      const std::string out = path("eval-" + name + ".json");
      const Result eval = multifit("train " + quoted(dir + "/" + name + ".spec.json") + " --load " +
                                   quoted(dir + "/" + name + ".weights") +
                                   " --epochs 0 --backend cpu --quiet --json " + quoted(out));
      ASSERT_EQ(eval.rc, 0) << eval.err;
      const json evaluated = json::parse(read_file(out))["models"][0];
      EXPECT_EQ(evaluated["test_loss"], m["test_loss"]) << name;
      EXPECT_EQ(evaluated["test_accuracy"], m["test_accuracy"]) << name;
    }
    EXPECT_EQ(files_in(dir), expected);  // the staging folder gone, nothing else left
  }
};

// The tiny sweep's models in each mode: the best 3 by val_accuracy, the same in every mode (on the
// CPU each model gives its serial numbers bit for bit).
TEST_F(SaveBest, TheBestKOfTheRankingAreKeptInEveryModeAndLoadToTheirTestMetrics) {
  std::vector<std::string> best_of_serial;
  for (const std::string mode : {"serial", "streams", "processes", "packed"}) {
    SCOPED_TRACE(mode);
    const std::string dir = path("best-" + mode), out = "r-" + mode + ".json";
    const Result r =
        multifit("run " + quoted(example("tiny-sweep.json")) + " --backend cpu --quiet --mode " +
                 mode + " --json " + quoted(path(out)) + " --save-best 3 " + quoted(dir));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(contains(
        r.err, "multifit: the best 3 by val_accuracy are in " + dir + " (best.json names them)\n"))
        << r.err;
    const json doc = result(out);
    ASSERT_EQ(doc["rank_by"], "val_accuracy");
    expect_the_rankings_best(doc, dir, 3);
    const std::vector<std::string> best = {doc["ranking"][0], doc["ranking"][1], doc["ranking"][2]};
    if (best_of_serial.empty()) best_of_serial = best;
    EXPECT_EQ(best, best_of_serial);
  }
}

// The example is a task the models learn: its best are far above chance (two classes, either as
// likely) and above its worst, so its ranking means something.
TEST_F(SaveBest, TheTinySweepsBestAreClearlyAboveChanceAndItsWorst) {
  const Result r = multifit("run " + quoted(example("tiny-sweep.json")) +
                            " --backend cpu --quiet --json " + quoted(path("r.json")));
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = result("r.json");
  ASSERT_EQ(doc["rank_by"], "val_accuracy");
  ASSERT_EQ(doc["ranking"].size(), 32u);
  const double best = model_named(doc, doc["ranking"].front())["epochs"].back()["val_accuracy"];
  const double worst = model_named(doc, doc["ranking"].back())["epochs"].back()["val_accuracy"];
  EXPECT_GE(best, 0.85);
  EXPECT_GE(best - worst, 0.15);
  EXPECT_GE(model_named(doc, doc["ranking"].front())["test_accuracy"].get<double>(), 0.85);
}

// --rank-by another metric: the kept are that ranking's first.
TEST_F(SaveBest, ByAnotherMetricTheKeptAreThatRankingsFirst) {
  const Result r =
      multifit("run " + quoted(example("tiny-sweep.json")) +
               " --backend cpu --quiet --mode streams " + "--rank-by test_loss --json " +
               quoted(path("r.json")) + " --save-best 2 " + quoted(path("best")));
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = result("r.json");
  ASSERT_EQ(doc["rank_by"], "test_loss");
  expect_the_rankings_best(doc, path("best"), 2);
}

// A model that diverged, failed or ran out of memory is never kept, however large K: best.json has
// the models that ended ok, and says so.
TEST_F(SaveBest, AModelThatFailedOrDivergedIsNeverKept) {
  json list = json::parse(read_file(example("tiny-sweep.json")));
  list.erase("grid");
  list["models"] = {
      {{"name", "good-1"}, {"optimizer", {{"learning_rate", 0.01}}}},
      {{"name", "diverges"}, {"optimizer", {{"name", "sgd"}, {"learning_rate", 1e6}}}},
      {{"name", "oom"}, {"memory", {{"limit", "1KiB"}}}},
      {{"name", "bad"}, {"layers", "none"}},
      {{"name", "good-2"}, {"optimizer", {{"learning_rate", 0.03}}}}};
  for (const std::string mode : {"serial", "processes"}) {
    SCOPED_TRACE(mode);
    const std::string dir = path("best-" + mode), out = "r-" + mode + ".json";
    const Result r = multifit("run " + sweep(list) + " --backend cpu --quiet --mode " + mode +
                              " --json " + quoted(path(out)) + " --save-best 5 " + quoted(dir));
    EXPECT_EQ(r.rc, 2) << r.err;  // the bad entry and the oom are a user's mistakes
    EXPECT_TRUE(
        contains(r.err, "multifit: the best 2 by val_accuracy are in " + dir +
                            " (best.json names them), all that have a value of val_accuracy\n"))
        << r.err;
    const json doc = result(out);
    EXPECT_EQ(model_named(doc, "diverges")["status"], "diverged");
    EXPECT_EQ(model_named(doc, "oom")["status"], "oom");
    EXPECT_EQ(model_named(doc, "bad")["status"], "failed");
    expect_the_rankings_best(doc, dir, 5);
    const json index = json::parse(read_file(fs::path(dir) / "best.json"));
    std::set<std::string> kept;
    for (const json& m : index["models"]) kept.insert(m["name"]);
    EXPECT_EQ(kept, (std::set<std::string>{"good-1", "good-2"}));
  }
}

// Thousands of models: never more than K files staged at once in one process (where the keeper
// saves them; K + 1 for the moment a new one is written and the one it displaces not yet removed),
// nor more than K and the workers at once in processes mode; sampled while the run goes.
TEST_F(SaveBest, ThousandsOfModelsStageNoMoreThanKFilesAtOnce) {
  json grid = json::parse(read_file(example("tiny-sweep.json")));
  const auto lengthen = [&](int rates, int seeds) {
    std::vector<double> lr;
    for (int i = 0; i < rates; ++i) lr.push_back(0.001 * (i + 1));
    std::vector<int> s;
    for (int i = 0; i < seeds; ++i) s.push_back(i + 1);
    grid["grid"] = {{"learning_rate", lr}, {"seed", s}};
  };
  struct Case {
    std::string args;
    int rates, seeds;
    size_t most;  // files staged at once, at most
  };
  for (const Case& c :
       {Case{"--mode streams", 8, 256, 4 + 1}, Case{"--mode packed --pack-size 64", 8, 256, 4 + 1},
        Case{"--mode processes --concurrency 4", 4, 16, 4 + 4}}) {
    SCOPED_TRACE(c.args);
    lengthen(c.rates, c.seeds);
    const std::string dir = path("best"), staging = dir + "/.staging";
    // The most files ending .weights in the staging folder, counted every few milliseconds.
    const Result r = multifit(
        "run " + sweep(grid) + " --backend cpu --quiet " + c.args + " --json " +
        quoted(path("r.json")) + " --save-best 4 " + quoted(dir) + " >" + quoted(path("run.out")) +
        " 2>" + quoted(path("run.err")) + " & p=$!; most=0; seen=0; " +
        "while kill -0 $p 2>/dev/null; do n=$(ls " + quoted(staging) +
        " 2>/dev/null | grep -c '[.]weights$'); [ \"$n\" -gt \"$most\" ] && most=$n; " +
        "[ \"$n\" -gt 0 ] && seen=$((seen+1)); done; wait $p; rc=$?; echo $most $seen >" +
        quoted(path("most")) + "; exit $rc");
    ASSERT_EQ(r.rc, 0) << read_file(path("run.err"));
    std::istringstream counted(read_file(path("most")));
    size_t most = 0, seen = 0;
    counted >> most >> seen;
    EXPECT_LE(most, c.most);
    EXPECT_GT(seen, 0u)
        << "the staging folder was never seen holding a file: the sampling saw nothing";
    const json doc = result("r.json");
    ASSERT_EQ(doc["models"].size(), size_t(c.rates * c.seeds));
    expect_the_rankings_best(doc, dir, 4);
  }
}

// A runner killed in mid-sweep (SIGKILL), or stopped by Ctrl-C (SIGINT), leaves its staging folder;
// --resume takes its files on, and the best K of the whole document are kept, with the weights they
// trained to.
TEST_F(SaveBest, AKilledOrInterruptedRunResumedKeepsTheBestOfTheWholeSweep) {
  json grid = json::parse(read_file(example("tiny-sweep.json")));
  grid["grid"] = {{"learning_rate", {0.001, 0.01, 0.03}},
                  {"seed", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}};
  // 30 models, one after another: time to be stopped among them
  grid["base"]["fit"]["epochs"] = 60;
  for (const std::string signal : {"KILL", "INT"}) {
    SCOPED_TRACE(signal);
    const std::string out = "r-" + signal + ".json", dir = path("best-" + signal);
    const std::string run = "run " + sweep(grid) + " --backend cpu --quiet --mode serial --json " +
                            quoted(path(out)) + " --save-best 3 " + quoted(dir);
    const std::string journal = quoted(path(out + ".journal"));
    const Result stopped =
        multifit(run + " 2>" + quoted(path("stopped.err")) + " & p=$!; for i in $(seq 400); do " +
                 "[ \"$(cat " + journal + " 2>/dev/null | wc -l)\" -ge 6 ] && break; sleep 0.01; " +
                 "done; kill -" + signal + " $p; wait $p");
    EXPECT_EQ(stopped.rc, signal == "KILL" ? 128 + 9 : 130) << read_file(path("stopped.err"));
    if (signal == "INT") {
      EXPECT_TRUE(contains(read_file(path("stopped.err")),
                           "multifit: note: --save-best: the run was interrupted, so its "
                           "best are not chosen yet; the weights it staged stay in " +
                               dir + "/.staging for --resume\n"))
          << read_file(path("stopped.err"));
    }
    ASSERT_TRUE(fs::is_directory(dir + "/.staging"));
    EXPECT_FALSE(fs::exists(dir + "/best.json"));
    const Result resumed = multifit(run + " --resume");
    ASSERT_EQ(resumed.rc, 0) << resumed.err;
    const json doc = result(out);
    ASSERT_GE(doc["resumed_models"].get<int>(), 5);
    ASSERT_LT(doc["resumed_models"].get<int>(), 30) << "the run ended before it was stopped";
    expect_the_rankings_best(doc, dir, 3);
  }
}

// A second run into the same folder replaces the first's best: the folder holds one run's.
TEST_F(SaveBest, ASecondRunReplacesTheFirstsBest) {
  const std::string run = "run " + quoted(example("tiny-sweep.json")) +
                          " --backend cpu --quiet --json " + quoted(path("r.json")) +
                          " --save-best ";
  ASSERT_EQ(multifit(run + "5 " + quoted(path("best"))).rc, 0);
  const Result again = multifit(run + "1 " + quoted(path("best")) + " --rank-by test_loss");
  ASSERT_EQ(again.rc, 0) << again.err;
  expect_the_rankings_best(result("r.json"), path("best"), 1);
}

// Each mistake is one line, exit 2, before anything trains: nothing is made in the folder, and no
// model's report is written.
TEST_F(SaveBest, WrongInputIsOneLineBeforeAnythingTrains) {
  std::ofstream(path("a-file")) << "x";
  json unvalidated = json::parse(read_file(example("tiny-sweep.json")));
  unvalidated["base"]["fit"]["validation_split"] = 0;
  const std::string tiny = "run " + quoted(example("tiny-sweep.json")) + " --backend cpu --quiet ";
  const auto refused = [&](const std::string& args, const std::string& why) {
    SCOPED_TRACE(args);
    const Result r = multifit(args);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_EQ(r.err, "multifit: error: " + why + "\n");
    EXPECT_TRUE(r.out.empty()) << r.out;  // no table: nothing trained
    EXPECT_FALSE(fs::exists(path("best")));
  };
  refused(tiny + "--save-best 0 " + quoted(path("best")),
          "--save-best: got 0; expected a whole number from 1 to 2147483647; see 'multifit run "
          "--help'");
  refused(tiny + "--save-best three " + quoted(path("best")),
          "--save-best: got three; expected a whole number from 1 to 2147483647; see 'multifit run "
          "--help'");
  refused(tiny + "--save-best 3 " + quoted(path("a-file")),
          "--save-best 3 " + path("a-file") +
              ": is a file, not a folder; give a folder for the best models' files "
              "(it is made when it does not exist)");
  refused(tiny + "--save-best 3 " + quoted(path("no/best")),
          "--save-best 3 " + path("no/best") + ": the folder " + path("no") +
              " does not exist, so " + path("no/best") + " cannot be made in it");
  refused(tiny + "--save-best 3 --json " + quoted(path("r.json")),
          "--save-best: the folder DIR, --json, looks like a flag: give K, then DIR; see 'multifit "
          "run --help'");
  refused(tiny + "--mode all --save-best 3 " + quoted(path("best")),
          "--save-best keeps the models of one run, and --mode all makes four: give one --mode "
          "(serial, streams, "
          "processes, packed or auto)");
  refused("run " + sweep(unvalidated) +
              " --backend cpu --quiet --rank-by val_accuracy --save-best 3 " +
              quoted(path("best")) + " --json " + quoted(path("r.json")),
          "--save-best with --rank-by val_accuracy: no model of the sweep can have val_accuracy, "
          "which needs "
          "validation rows (fit.validation_split above 0) and an accuracy metric; rank by another "
          "metric, or leave "
          "--rank-by out");
  EXPECT_TRUE(result("r.json")["models"].empty());  // the document says why, with no model trained
  EXPECT_TRUE(contains(result("r.json")["error"], "--save-best with --rank-by val_accuracy"));
  fs::create_directories(path("best"));
  const Result over = multifit(tiny + "--save-best 3 " + quoted(path("best")) + " --json " +
                               quoted(path("best/best.json")));
  EXPECT_EQ(over.rc, 2);
  EXPECT_EQ(over.err, "multifit: error: --save-best's index " + path("best/best.json") +
                          ": is also --json; give the "
                          "output its own file\n");
  EXPECT_TRUE(files_in(path("best")).empty());
}

// A folder that cannot be written: a read-only file system (root may write into any folder of an
// ordinary one), mounted in a private mount namespace; as a user, a folder without write
// permission.
TEST_F(SaveBest, AFolderThatCannotBeWrittenIsRefused) {
  fs::create_directories(path("ro"));
  std::string setup;
  if (geteuid() == 0) {
    if (std::system(("unshare -m sh -c " + quoted("mount -t tmpfs -o ro tmpfs " + path("ro")) +
                     " >/dev/null 2>&1")
                        .c_str()) != 0)
      GTEST_SKIP() << "no private mount namespace for a read-only tmpfs here (unshare -m)";
    setup = "unshare -m sh -c " +
            quoted("mount -t tmpfs -o ro tmpfs " + path("ro") + " && \"$0\" \"$@\"") + " ";
  } else {
    fs::permissions(path("ro"), fs::perms::owner_read | fs::perms::owner_exec);
  }
  for (const std::string& dir : {path("ro"), path("ro/best")}) {
    const Result r = multifit("run " + quoted(example("tiny-sweep.json")) +
                                  " --backend cpu --quiet --save-best 3 " + quoted(dir),
                              setup);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_TRUE(contains(r.err, "multifit: error: --save-best 3 " + dir + ": the folder " +
                                    path("ro") + " is not writable ("))
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  fs::permissions(path("ro"), fs::perms::owner_all);
}

}  // namespace
