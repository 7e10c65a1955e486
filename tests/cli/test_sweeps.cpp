// Sweeps at the sizes users push them to, sweeps that survive the runner, and their results ranked:
// thousands of tiny models in each in-process mode on a bounded pool of threads; the journal, a
// runner killed with SIGKILL and resumed, compared model by model with an uninterrupted run;
// journals that must be refused; the ranking in the document, the CSV and on the terminal.
#include <algorithm>
#include <csignal>
#include <map>
#include <set>
#include <sstream>

#include "cli_support.h"

namespace {

using namespace cli_test;

// examples/tiny-sweep.json's model, with `rates` learning rates by `seeds` seeds.
json tiny_grid(int rates, int seeds, int epochs = 2) {
  json sweep = json::parse(read_file(example("tiny-sweep.json")));
  std::vector<double> lr;
  for (int i = 0; i < rates; ++i) lr.push_back(0.001 * (i + 1));
  std::vector<int> s;
  for (int i = 0; i < seeds; ++i) s.push_back(i + 1);
  sweep["grid"] = {{"learning_rate", lr}, {"seed", s}};
  sweep["base"]["fit"]["epochs"] = epochs;
  return sweep;
}

// What must be equal between two runs of a model: all but when and where it ran (a resumed packed
// run packs the models left, so their packs are others).
json numbers_of(json model) {
  for (const char* key : {"startup_s", "samples_per_s", "train_s", "solo_s", "slowdown", "pid",
                          "memory", "pack", "pack_members", "pack_boundary"})
    model.erase(key);
  // fewer models left share them among fewer
  if (model["settings"].is_object()) model["settings"].erase("threads");
  for (json& epoch : model["epochs"]) epoch.erase("seconds"), epoch.erase("samples_per_s");
  return model;
}

class Sweeps : public Cli {
 protected:
  std::string sweep(const json& doc, const std::string& file = "sweep.json") const {
    std::ofstream(path(file)) << doc.dump(2);
    return quoted(path(file));
  }
  int journal_lines(const std::string& file) const {
    const std::string text = read_file(path(file));
    return int(std::count(text.begin(), text.end(), '\n'));
  }
  // Every model of `got` equals the same model of `want`, but for its timings and its process.
  void expect_same_models(const json& got, const json& want) const {
    ASSERT_EQ(got["models"].size(), want["models"].size());
    for (size_t i = 0; i < want["models"].size(); ++i) {
      const json a = numbers_of(got["models"][i]), b = numbers_of(want["models"][i]);
      for (const auto& [key, value] : b.items())
        EXPECT_EQ(a.value(key, json()), value) << want["models"][i]["name"] << ": " << key;
    }
  }
};

TEST_F(Sweeps, ThousandsOfTinyModelsTrainInEachInProcessModeOnABoundedPool) {
  const std::string grid = sweep(tiny_grid(8, 512));  // 4096 models
  for (const std::string mode : {"serial", "streams", "packed"}) {
    SCOPED_TRACE(mode);
    const Result r = multifit("run " + grid + " --backend cpu --quiet --mode " + mode + " --json " +
                              quoted(path("r.json")));
    EXPECT_EQ(r.rc, 0) << r.err.substr(0, 2000);
    const json doc = result("r.json");
    ASSERT_EQ(doc["models"].size(), 4096u);
    for (const json& m : doc["models"])
      ASSERT_EQ(m["status"], "ok") << m["name"] << ": " << m["error"];
    EXPECT_GE(doc["training_threads"].get<int>(), 1);
    // OpenBLAS's MAX_THREADS here, and far from 4096
    EXPECT_LE(doc["training_threads"].get<int>(), 64);
  }
}

TEST_F(Sweeps, EachModelIsJournaledAsItEnds) {
  const Result r =
      multifit("run " + sweep(tiny_grid(2, 3)) + " --backend cpu --quiet --mode streams --json " +
               quoted(path("r.json")));
  ASSERT_EQ(r.rc, 0) << r.err;
  std::ifstream in(path("r.json.journal"));
  std::string line;
  std::getline(in, line);
  const json doc = result("r.json");
  // The sweep as the document names it (its fingerprint is study/sweep/shard.cpp's), and no shard:
  // the whole sweep.
  EXPECT_EQ(doc["sweep"]["fingerprint"].get<std::string>().size(), 16u);
  EXPECT_EQ(json::parse(line), json({{"journal", "multifit"},
                                     {"version", 1},
                                     {"models", 6},
                                     {"backend", "cpu"},
                                     {"mode", "streams"},
                                     {"solo", false},
                                     {"sweep", "tiny-sweep"},
                                     {"fingerprint", doc["sweep"]["fingerprint"]},
                                     {"shard", nullptr},
                                     {"scheduler", nullptr}}));
  std::set<size_t> seen;
  while (std::getline(in, line)) {
    const json entry = json::parse(line);
    EXPECT_EQ(entry["mode"], "streams");
    EXPECT_EQ(entry["exit_code"], 0);
    const size_t index = entry["index"];
    seen.insert(index);
    EXPECT_EQ(entry["name"], doc["models"][index]["name"]);
    EXPECT_FLOAT_EQ(entry["spec"]["optimizer"]["learning_rate"].get<float>(),
                    doc["models"][index]["settings"]["learning_rate"].get<float>());
    EXPECT_EQ(numbers_of(entry["report"]), numbers_of(doc["models"][index]));
  }
  EXPECT_EQ(seen.size(), 6u);
}

TEST_F(Sweeps, ARunnerKilledMidSweepResumesToTheDocumentOfAnUninterruptedRun) {
  // 40 models of 60 epochs, one after another
  const std::string grid = sweep(tiny_grid(4, 10, 60));
  const std::string common = " --backend cpu --quiet --mode serial";
  ASSERT_EQ(multifit("run " + grid + common + " --json " + quoted(path("whole.json"))).rc, 0);
  // SIGKILL once the journal holds a few models (its header and 3 lines), then resume.
  const std::string journal = quoted(path("cut.json.journal"));
  const Result killed = multifit(
      "run " + grid + common + " --json " + quoted(path("cut.json")) +
      " & p=$!; for i in $(seq 400); do [ \"$(cat " + journal +
      " 2>/dev/null | wc -l)\" -ge 4 ] && break; sleep 0.01; done; kill -KILL $p; wait $p");
  EXPECT_EQ(killed.rc, 128 + SIGKILL) << killed.err;
  EXPECT_FALSE(fs::exists(path("cut.json")));  // nothing but the journal
  const int ended = journal_lines("cut.json.journal") - 1;
  ASSERT_GE(ended, 3);
  ASSERT_LT(ended, 40) << "the run ended before it was killed";
  const Result resumed =
      multifit("run " + grid + common + " --json " + quoted(path("cut.json")) + " --resume");
  EXPECT_EQ(resumed.rc, 0) << resumed.err;
  EXPECT_TRUE(contains(resumed.err, "resume: " + std::to_string(ended) + " models ended before"))
      << resumed.err;
  const json doc = result("cut.json");
  EXPECT_EQ(doc["resumed_models"], ended);
  expect_same_models(doc, result("whole.json"));
  EXPECT_EQ(journal_lines("cut.json.journal"), 41);  // the header and every model once
}

TEST_F(Sweeps, AResumedStreamsOrPackedRunGivesTheModelsLeftTheirNumbers) {
  const std::string grid = sweep(tiny_grid(2, 6));
  for (const std::string mode : {"streams", "packed"}) {
    SCOPED_TRACE(mode);
    const std::string common = " --backend cpu --quiet --mode " + mode;
    ASSERT_EQ(multifit("run " + grid + common + " --json " + quoted(path("whole.json"))).rc, 0);
    // A journal of 5 of the 12 models, as a runner killed after them leaves it.
    std::ifstream in(path("whole.json.journal"));
    std::ofstream out(path("cut.json.journal"));
    std::string line;
    for (int i = 0; i < 6 && std::getline(in, line); ++i) out << line << '\n';
    out.close();
    const Result r =
        multifit("run " + grid + common + " --json " + quoted(path("cut.json")) + " --resume");
    EXPECT_EQ(r.rc, 0) << r.err;
    const json doc = result("cut.json");
    EXPECT_EQ(doc["resumed_models"], 5);
    expect_same_models(doc, result("whole.json"));
  }
}

TEST_F(Sweeps, AJournalCutShortInItsLastLineResumesAndStaysWhole) {
  const std::string grid = sweep(tiny_grid(1, 3));
  const std::string run = "run " + grid + " --backend cpu --quiet --json " + quoted(path("r.json"));
  ASSERT_EQ(multifit(run).rc, 0);
  std::string text = read_file(path("r.json.journal"));
  text.resize(text.size() - 40);  // the runner died writing the last model's line
  std::ofstream(path("r.json.journal"), std::ios::trunc) << text;
  const Result r = multifit(run + " --resume");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(result("r.json")["resumed_models"], 2);
  // The cut line was cut off, so the journal reads whole: a second resume takes all three.
  EXPECT_EQ(journal_lines("r.json.journal"), 4);
  const Result again = multifit(run + " --resume");
  EXPECT_EQ(again.rc, 0) << again.err;
  EXPECT_EQ(result("r.json")["resumed_models"], 3);
}

TEST_F(Sweeps, AFreshRunKeepsTheEarlierJournal) {
  const std::string run =
      "run " + sweep(tiny_grid(1, 2)) + " --backend cpu --json " + quoted(path("r.json"));
  ASSERT_EQ(multifit(run).rc, 0);
  const std::string first = read_file(path("r.json.journal"));
  const Result r = multifit(run);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "the earlier journal at " + path("r.json.journal") + " is kept as " +
                                  path("r.json.journal.previous")))
      << r.err;
  EXPECT_EQ(read_file(path("r.json.journal.previous")), first);
  EXPECT_EQ(journal_lines("r.json.journal"), 3);
}

TEST_F(Sweeps, AResumedModeOfAllHasNoSpeedupOfItsOwn) {
  const std::string grid = sweep(tiny_grid(1, 4));
  const std::string run =
      "run " + grid + " --backend cpu --quiet --mode all --json " + quoted(path("r.json"));
  ASSERT_EQ(multifit(run).rc, 0);
  // Serial and streams ended, the rest not: as a runner killed during processes mode leaves it.
  std::ifstream in(path("r.json.journal"));
  std::ofstream out(path("cut.journal"));
  for (std::string line; std::getline(in, line);)
    if (!contains(line, "\"mode\":\"processes\"") && !contains(line, "\"mode\":\"packed\""))
      out << line << '\n';
  out.close();
  const Result r = multifit(run + " --resume --journal " + quoted(path("cut.journal")));
  EXPECT_EQ(r.rc, 0) << r.err;
  const json doc = result("r.json");
  ASSERT_EQ(doc["runs"].size(), 4u);
  for (int i = 0; i < 2; ++i) {  // serial, streams: every model from the journal
    EXPECT_EQ(doc["runs"][i]["resumed_models"], 4);
    EXPECT_EQ(doc["runs"][i]["concurrency"], 0);
    EXPECT_TRUE(doc["runs"][i]["speedup_vs_serial"].is_null());
  }
  EXPECT_TRUE(doc["runs"][3]["speedup_vs_serial"].is_null());  // packed trained all, serial did not
  // a model's own solo time stands
  EXPECT_TRUE(doc["runs"][3]["models"][0]["slowdown"].is_number());
}

TEST_F(Sweeps, AJournalOfAnotherSweepOrAChangedSpecIsRefused) {
  const std::string grid = sweep(tiny_grid(2, 2));
  const std::string out = " --backend cpu --quiet --json " + quoted(path("r.json"));
  ASSERT_EQ(multifit("run " + grid + out).rc, 0);
  const auto refused = [&](const std::string& args, const std::string& why) {
    const Result r = multifit(args);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_TRUE(contains(r.err, why)) << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
  };
  refused("run " + grid + out + " --resume --learning-rate 0.5",
          "r.json.journal:2: model 'tiny-lr0.001-s1' changed since it was journaled: "
          "optimizer.learning_rate: ");
  json other = tiny_grid(2, 2);
  other["base"]["name"] = "other";
  refused("run " + sweep(other, "other.json") + out + " --resume",
          "r.json.journal:2: model #0 is 'tiny-lr0.001-s1' but this sweep's is 'other-lr0.001-s1': "
          "another sweep");
  refused("run " + sweep(tiny_grid(3, 3), "bigger.json") + out + " --resume",
          "r.json.journal:1: a journal of a sweep of 4 models; this sweep has 9: another sweep");
  refused(
      "run " + grid + " --backend host-exec --quiet --json " + quoted(path("r.json")) + " --resume",
      "a journal of a run on the cpu backend; this run is on host-exec; resume with --backend cpu");
  refused("run " + grid + out + " --resume --mode streams",
          "r.json.journal:1: a journal of a run with --mode serial; this run's is streams; resume "
          "with --mode serial");
  refused("run " + grid + out + " --resume --solo",
          "r.json.journal:1: a journal of a run without --solo; resume without it");
  refused("run " + grid + " --backend cpu --quiet --resume",
          "--resume needs the journal of the run to resume");
  refused(
      "run " + grid + " --backend cpu --quiet --resume --journal " + quoted(path("none.journal")),
      "--resume: no journal at " + path("none.journal"));
  std::ofstream(path("junk.journal")) << "{\"not\": \"a journal\"}\n";
  refused(
      "run " + grid + " --backend cpu --quiet --resume --journal " + quoted(path("junk.journal")),
      "junk.journal:1: not a multifit journal");
  refused("run " + grid + " --backend cpu --quiet --journal -",
          "--journal -: the journal is read back by --resume");
}

}  // namespace

namespace {

using namespace cli_test;

class Ranking : public Cli {};

// A large sweep is ranked by validation accuracy where it has validation rows (Keras Tuner's best
// trials), best first, in the document, the CSV and on the terminal; --rank-by picks another
// metric.
TEST_F(Ranking, ALargeSweepIsRankedByValidationAccuracyBestFirst) {
  json grid = tiny_grid(4, 8);  // 32 models: more than the full table shows
  grid["base"]["fit"]["validation_split"] = 0.25;
  std::ofstream(path("sweep.json")) << grid.dump();
  const Result r = multifit("run " + quoted(path("sweep.json")) + " --backend cpu --quiet --json " +
                            quoted(path("r.json")) + " --csv " + quoted(path("r.csv")));
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = result("r.json");
  EXPECT_EQ(doc["rank_by"], "val_accuracy");
  ASSERT_EQ(doc["ranking"].size(), 32u);
  std::map<std::string, double> val_accuracy;
  for (const json& m : doc["models"])
    val_accuracy[m["name"]] = m["epochs"].back()["val_accuracy"].get<double>();
  for (size_t i = 1; i < 32; ++i)
    EXPECT_GE(val_accuracy[doc["ranking"][i - 1]], val_accuracy[doc["ranking"][i]]);
  // The terminal: counts and the best and worst five, not 32 rows.
  EXPECT_TRUE(contains(r.out, "by status: 32 ok")) << r.out;
  EXPECT_TRUE(contains(r.out, "best 5 by val_accuracy:")) << r.out;
  EXPECT_TRUE(contains(r.out, "worst 5 by val_accuracy:")) << r.out;
  EXPECT_TRUE(contains(r.out, "  " + doc["ranking"][0].get<std::string>() + " ")) << r.out;
  EXPECT_FALSE(contains(r.out, "  " + doc["ranking"][10].get<std::string>() + " ")) << r.out;
  // The CSV: each model's rank, its hyper-parameters and final metrics.
  std::ifstream csv(path("r.csv"));
  std::string header, row;
  std::getline(csv, header);
  EXPECT_TRUE(
      contains(header,
               ",index,name,status,rank,optimizer,learning_rate,batch_size,epochs_asked,"
               "validation_split,seed,hidden,activation,loss,accuracy,val_loss,val_accuracy,"))
      << header;
  EXPECT_TRUE(contains(header, ",device,host,mpi_rank,")) << header;
  std::getline(csv, row);
  const std::string first = doc["models"][0]["name"];
  const auto place =
      std::find(doc["ranking"].begin(), doc["ranking"].end(), first) - doc["ranking"].begin() + 1;
  EXPECT_TRUE(contains(
      row, ",0," + first + ",ok," + std::to_string(place) + ",adam,0.001,64,2,0.25,1,64,relu,"))
      << row;
  // Field by field (no field of this row is quoted): where the model is in the sweep, and where it
  // ran.
  std::map<std::string, std::string> field;
  std::istringstream names(header), values(row);
  for (std::string name, value; std::getline(names, name, ',');)
    field[name] = std::getline(values, value, ',') ? value : "";
  EXPECT_EQ(field["index"], "0");
  EXPECT_EQ(field["hidden"], "64");
  EXPECT_EQ(field["activation"], "relu");
  EXPECT_EQ(field["host"], doc["models"][0]["host"].get<std::string>());
  EXPECT_EQ(field["mpi_rank"], "");  // one process, no MPI

  const Result by_time =
      multifit("run " + quoted(path("sweep.json")) + " --backend cpu --quiet --rank-by train_s " +
               "--json " + quoted(path("t.json")));
  ASSERT_EQ(by_time.rc, 0) << by_time.err;
  const json timed = result("t.json");
  EXPECT_EQ(timed["rank_by"], "train_s");
  std::map<std::string, double> train_s;
  for (const json& m : timed["models"]) train_s[m["name"]] = m["train_s"].get<double>();
  for (size_t i = 1; i < 32; ++i)
    EXPECT_LE(train_s[timed["ranking"][i - 1]], train_s[timed["ranking"][i]]);

  const Result bad =
      multifit("run " + quoted(path("sweep.json")) + " --backend cpu --rank-by accuracy");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_TRUE(contains(
      bad.err,
      "'accuracy' is not one of val_accuracy, val_loss, test_accuracy, test_loss, loss, train_s"))
      << bad.err;
}

}  // namespace

// ---- Searches with a scheduler ------------------------------------------------------------------

// Each model's verdicts as the document says them: [(epochs, value, kept)...], its status and
// epochs.
json verdicts_of(const json& doc) {
  json out = json::array();
  for (const json& m : doc["models"])
    out.push_back({m["name"], m["status"], m["epochs"].size(),
                   m["fit"].is_null() ? json() : m["fit"]["rungs"]});
  return out;
}

// The scheduler's promotions depend on the trials before each in the sweep, never on the machine:
// every mode stops the same trials at the same rungs with the same numbers, and the verdicts are
// ASHA's (Ray Tune's cutoff, recomputed here from the document's own rung values).
TEST_F(Sweeps, AScheduledSearchStopsTheSameTrialsInEveryMode) {
  const std::string search = quoted(example("tiny-search-asha.json"));
  json serial;
  for (const std::string mode : {"serial", "streams", "packed", "processes"}) {
    SCOPED_TRACE(mode);
    const Result r = multifit("run " + search + " --backend cpu --quiet --mode " + mode +
                              " --json " + quoted(path("r.json")));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_FALSE(contains(r.err, "error")) << r.err;  // a trial stopped at a rung is no error
    const json doc = result("r.json");
    if (serial.is_null()) serial = doc;
    EXPECT_EQ(verdicts_of(doc), verdicts_of(serial));
  }
  int stopped = 0;
  // by rung: the values recorded so far, in sweep order
  std::map<int, std::vector<double>> earlier;
  for (const json& m : serial["models"]) {
    ASSERT_TRUE(m["status"] == "ok" || m["status"] == "stopped") << m["name"] << ": " << m["error"];
    stopped += m["status"] == "stopped";
    for (const json& rung : m["fit"]["rungs"]) {
      std::vector<double>& before = earlier[rung["epochs"].get<int>()];
      bool kept = true;
      if (!before.empty()) {  // numpy.percentile(before, 100 * (1 - 1/3)), linear
        std::vector<double> v = before;
        std::sort(v.begin(), v.end());
        const double at = (1 - 1.0 / 3) * double(v.size() - 1);
        const size_t low = size_t(at), high = std::min(low + 1, v.size() - 1);
        kept = rung["value"].get<double>() >= v[low] + (v[high] - v[low]) * (at - double(low));
      }
      EXPECT_EQ(rung["kept"].get<bool>(), kept) << m["name"] << " at epoch " << rung["epochs"];
      before.push_back(rung["value"]);
    }
  }
  EXPECT_GT(stopped, 0);
  EXPECT_LT(stopped, 27);
  const json& scheduler = serial["scheduler"];
  EXPECT_EQ(scheduler["rungs"][0]["trials"], 27);
  EXPECT_EQ(scheduler["rungs"][0]["epochs"], 1);
  EXPECT_LT(scheduler["compute_fraction"].get<double>(), 0.6);
}

// A scheduled run cut short and resumed (its journal holds the trials that ended first, in the
// order they ended) ends with the verdicts and numbers of an uninterrupted run: a verdict depends
// only on the rungs of the trials before it, which the journal's reports hold.
TEST_F(Sweeps, AScheduledRunResumedFromItsJournalMakesTheSameVerdicts) {
  const std::string search = quoted(example("tiny-search-asha.json"));
  for (const std::string mode : {"serial", "packed"}) {
    SCOPED_TRACE(mode);
    const std::string common = " --backend cpu --quiet --mode " + mode;
    ASSERT_EQ(multifit("run " + search + common + " --json " + quoted(path("whole.json"))).rc, 0);
    std::ifstream in(path("whole.json.journal"));
    std::ofstream out(path("cut.json.journal"));
    std::string line;
    // the header and 10 models
    for (int i = 0; i < 11 && std::getline(in, line); ++i) out << line << '\n';
    out.close();
    const Result r =
        multifit("run " + search + common + " --json " + quoted(path("cut.json")) + " --resume");
    EXPECT_EQ(r.rc, 0) << r.err;
    const json doc = result("cut.json");
    EXPECT_EQ(doc["resumed_models"], 10);
    expect_same_models(doc, result("whole.json"));
    EXPECT_EQ(doc["scheduler"]["rungs"], result("whole.json")["scheduler"]["rungs"]);
  }
}

// A trial whose own epochs end at a rung has trained what it asked for: it ends ok, tested and
// ranked.
TEST_F(Sweeps, ARungAtATrialsLastEpochDoesNotStopIt) {
  json search = json::parse(read_file(example("tiny-search-asha.json")));
  search["search"]["space"]["epochs"] = {{"choice", {3, 9}}};
  const Result r =
      multifit("run " + sweep(search) + " --backend cpu --quiet --mode streams --json " +
               quoted(path("r.json")));
  ASSERT_EQ(r.rc, 0) << r.err;
  int short_ones = 0;
  const json doc = result("r.json");
  for (const json& m : doc["models"]) {
    if (m["values"]["epochs"] != 3) continue;
    ++short_ones;
    if (m["epochs"].size() == 3) {
      EXPECT_EQ(m["status"], "ok") << m["name"];
      EXPECT_FALSE(m["test_accuracy"].is_null()) << m["name"];
    }
    for (const json& rung : m["fit"]["rungs"]) EXPECT_LT(rung["epochs"].get<int>(), 3) << m["name"];
  }
  EXPECT_GT(short_ones, 0);
}

// The journal is of one scheduler's verdicts: a resume under another is refused, as for a changed
// spec.
TEST_F(Sweeps, AResumeUnderAnotherSchedulerIsRefused) {
  json search = json::parse(read_file(example("tiny-search-asha.json")));
  ASSERT_EQ(
      multifit("run " + sweep(search) + " --backend cpu --quiet --json " + quoted(path("r.json")))
          .rc,
      0);
  search["scheduler"]["reduction_factor"] = 2;
  const Result r = multifit("run " + sweep(search) + " --backend cpu --quiet --resume --json " +
                            quoted(path("r.json")));
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "r.json.journal:1: a journal of a run with the scheduler ")) << r.err;
  EXPECT_TRUE(contains(r.err, "\"reduction_factor\":2")) << r.err;
}

// A worker that dies after a rung leaves the rung its parent heard (the trials after it were judged
// against it) in its report, so that the document explains every verdict.
TEST_F(Sweeps, AWorkerThatDiesKeepsTheRungsItWasJudgedAt) {
  const Result r =
      multifit("run " + quoted(example("tiny-search-asha.json")) +
               " --backend cpu --quiet --mode processes --inject-fault tiny-t01 --json " +
               quoted(path("r.json")));
  EXPECT_EQ(r.rc, 1) << r.err;
  const json doc = result("r.json");
  EXPECT_EQ(doc["models"][1]["status"], "failed");
  ASSERT_FALSE(doc["models"][1]["fit"].is_null());
  EXPECT_EQ(doc["models"][1]["fit"]["rungs"][0]["epochs"], 1);
  EXPECT_EQ(doc["scheduler"]["rungs"][0]["trials"], 27);
}

TEST_F(Sweeps, ASchedulerUnderShardsIsRefusedInOneLine) {
  const Result r = multifit("run " + quoted(example("tiny-search-asha.json")) +
                            " --backend cpu --quiet --shard 1/2 --json " + quoted(path("r.json")));
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "scheduler: not available with --shard yet")) << r.err;
}
