// A sweep split into shards (run --shard I/N) and merged back (multifit merge): the merged document
// against one unsharded run of the same sweep, model by model; a journal as a part; parts that must
// be refused (overlapping, foreign, broken) and models that no part has; bad --shard values; a
// shard's journal resumed only as that shard.
#include <set>

#include "cli_support.h"

namespace {

using namespace cli_test;

// examples/tiny-sweep.json's model with a validation split (so that every metric exists), 2
// learning rates by 3 seeds: 6 models, which 3 shards split 2, 2 and 2.
json six_models(const std::string& name = "six") {
  json sweep = json::parse(read_file(example("tiny-sweep.json")));
  sweep["name"] = name;
  sweep["base"]["fit"]["validation_split"] = 0.25;
  sweep["grid"] = {{"learning_rate", {0.001, 0.01}}, {"seed", {1, 2, 3}}};
  return sweep;
}

// What must be equal between a model trained in a shard and in one run of the whole sweep: all but
// when it ran, in which process and on how many cpu threads (a shard's fewer models at once share
// them among fewer; its memory in use around serial's releases depends on the models before it).
json numbers_of(json model) {
  for (const char* key :
       {"startup_s", "samples_per_s", "train_s", "solo_s", "slowdown", "pid", "memory"})
    model.erase(key);
  if (model["settings"].is_object()) model["settings"].erase("threads");
  for (json& epoch : model["epochs"]) epoch.erase("seconds"), epoch.erase("samples_per_s");
  return model;
}

class Merge : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    sweep_ = write_sweep(six_models(), "sweep.json");
  }
  std::string write_sweep(const json& doc, const std::string& file) const {
    std::ofstream(path(file)) << doc.dump(2);
    return quoted(path(file));
  }
  // `multifit run` of the sweep on the CPU, quietly, with more flags; its document is `out`.
  Result run(const std::string& out, const std::string& flags = "",
             const std::string& sweep = "") const {
    return multifit("run " + (sweep.empty() ? sweep_ : sweep) + " --backend cpu --quiet --json " +
                    quoted(path(out)) + " " + flags);
  }
  // The three shards, as part-0.json, part-1.json and part-2.json.
  void run_shards(const std::string& flags = "") const {
    for (int i = 0; i < 3; ++i) {
      const Result r = run("part-" + std::to_string(i) + ".json",
                           "--shard " + std::to_string(i) + "/3 " + flags);
      ASSERT_EQ(r.rc, 0) << r.err;
    }
  }
  Result merge(const std::vector<std::string>& parts, const std::string& flags = "") const {
    std::string args = "merge";
    // GCC 12 warns of " " + s here
    for (const std::string& part : parts) args.append(" ").append(quoted(path(part)));
    return multifit(
        args.append(" --json ").append(quoted(path("all.json"))).append(" ").append(flags));
  }
  // Every model of `got` equals the same model of `want` but for its timings and its process.
  static void expect_same_models(const json& got, const json& want) {
    ASSERT_EQ(got["models"].size(), want["models"].size());
    for (size_t i = 0; i < want["models"].size(); ++i)
      EXPECT_EQ(numbers_of(got["models"][i]), numbers_of(want["models"][i]))
          << want["models"][i]["name"];
  }
  // A refusal: exit code 2, one line on stderr that holds every one of `words`, and a document that
  // says why and holds no model.
  void expect_refused(const Result& r, const std::vector<std::string>& words) const {
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    for (const std::string& word : words)
      EXPECT_TRUE(contains(r.err, word)) << "no '" << word << "' in: " << r.err;
    const json doc = result("all.json");
    EXPECT_TRUE(doc["models"].empty());
    EXPECT_EQ(doc["error"].get<std::string>() + "\n",
              r.err.substr(std::string("multifit: error: ").size()));
  }

  std::string sweep_;
};

TEST_F(Merge, ThreeShardsMergeToTheDocumentOfOneSerialRun) {
  ASSERT_EQ(run("whole.json").rc, 0);
  run_shards();
  const json whole = result("whole.json");
  for (int i = 0; i < 3;
       ++i) {  // each shard's document: its models alone, naming the sweep and the shard
    SCOPED_TRACE(i);
    const json part = result("part-" + std::to_string(i) + ".json");
    EXPECT_EQ(part["sweep"], whole["sweep"]);
    EXPECT_EQ(part["shard"], json({{"index", i}, {"count", 3}}));
    ASSERT_EQ(part["models"].size(), 2u);
    for (int k = 0; k < 2; ++k) EXPECT_EQ(part["models"][k]["index"], i + 3 * k);
  }
  EXPECT_EQ(whole["sweep"]["name"], "six");
  EXPECT_EQ(whole["sweep"]["models"], 6);
  EXPECT_TRUE(whole["shard"].is_null());

  // Given out of order: the merged document is in sweep order all the same.
  const Result r =
      merge({"part-2.json", "part-0.json", "part-1.json"}, "--csv " + quoted(path("all.csv")));
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(contains(r.out, "merge: six, 6 of its 6 models from 3 parts, serial mode on cpu"))
      << r.out;
  const json merged = result("all.json");
  expect_same_models(merged, whole);
  EXPECT_EQ(merged["sweep"], whole["sweep"]);
  EXPECT_TRUE(merged["shard"].is_null());
  EXPECT_EQ(merged["mode"], "serial");
  EXPECT_EQ(merged["backend"], "cpu");
  EXPECT_TRUE(merged["error"].is_null());
  EXPECT_EQ(merged["rank_by"], "val_accuracy");
  EXPECT_EQ(merged["ranking"], whole["ranking"]);
  ASSERT_EQ(merged["shards"].size(), 3u);
  double longest = 0;
  for (int i = 0; i < 3; ++i) {
    const json& part = merged["shards"][i];
    const json doc = result("part-" + std::to_string((i + 2) % 3) + ".json");  // in the order given
    EXPECT_EQ(part["index"], (i + 2) % 3);
    EXPECT_EQ(part["models"], 2);
    EXPECT_EQ(part["host"], doc["models"][0]["host"]);
    EXPECT_EQ(part["wall_s"], doc["wall_s"]);
    EXPECT_EQ(part["startup_s"], doc["startup_s"]);
    EXPECT_EQ(part["samples_per_s"], doc["samples_per_s"]);
    longest = std::max(longest, doc["wall_s"].get<double>());
  }
  EXPECT_EQ(merged["wall_s"], longest);        // the longest part's
  EXPECT_TRUE(merged["startup_s"].is_null());  // no one process measured the whole
  EXPECT_TRUE(merged["samples_per_s"].is_null());
  const std::string csv = read_file(path("all.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7);  // its header and a row per model

  // --rank-by ranks the merged models as run would.
  ASSERT_EQ(merge({"part-0.json", "part-1.json", "part-2.json"}, "--rank-by test_loss").rc, 0);
  ASSERT_EQ(run("whole.json", "--rank-by test_loss").rc, 0);
  EXPECT_EQ(result("all.json")["ranking"], result("whole.json")["ranking"]);
}

// Shards in streams mode give their models the numbers of a serial run: the mode is the merge's.
TEST_F(Merge, ShardsInAnotherModeMergeInThatMode) {
  ASSERT_EQ(run("whole.json").rc, 0);
  run_shards("--mode streams");
  const Result r = merge({"part-0.json", "part-1.json", "part-2.json"});
  EXPECT_EQ(r.rc, 0) << r.err;
  const json merged = result("all.json");
  EXPECT_EQ(merged["mode"], "streams");
  expect_same_models(merged, result("whole.json"));
}

TEST_F(Merge, AJournalIsAPart) {
  ASSERT_EQ(run("whole.json").rc, 0);
  run_shards();
  // Shard 2's runner was killed after its models ended, before its document: its journal stands in.
  const Result r = merge({"part-0.json", "part-1.json", "part-2.json.journal"});
  EXPECT_EQ(r.rc, 0) << r.err;
  const json merged = result("all.json");
  expect_same_models(merged, result("whole.json"));
  const json& journal_part = merged["shards"][2];
  EXPECT_EQ(journal_part["index"], 2);
  EXPECT_EQ(journal_part["models"], 2);
  EXPECT_TRUE(journal_part["wall_s"].is_null());  // a journal does not time its run
  EXPECT_EQ(journal_part["host"], merged["models"][2]["host"]);

  // Killed while it wrote its last line: that model is said to be in no part, the rest merge.
  std::string text = read_file(path("part-2.json.journal"));
  text.resize(text.size() - 40);
  std::ofstream(path("cut.journal")) << text;
  const Result cut = merge({"part-0.json", "part-1.json", "cut.journal"});
  EXPECT_EQ(cut.rc, 1) << cut.err;
  EXPECT_TRUE(contains(cut.err, "cut.journal:3: cut short")) << cut.err;
  EXPECT_TRUE(contains(cut.err,
                       "1 of the sweep's 6 models is in no part: #5; the document has the other 5"))
      << cut.err;
  EXPECT_EQ(result("all.json")["models"].size(), 5u);
}

TEST_F(Merge, OverlappingPartsAreRefused) {
  ASSERT_EQ(run("whole.json").rc, 0);
  run_shards();
  expect_refused(merge({"part-0.json", "part-1.json", "part-0.json"}),
                 {"part-0.json and", "are the same file"});
  // The same file under another name.
  expect_refused(
      multifit("merge " + quoted(path("part-0.json")) + " " +
               quoted(dir_.string() + "/./part-0.json") + " --json " + quoted(path("all.json"))),
      {"are the same file"});
  // One model in two parts: both files and the model named.
  expect_refused(
      merge({"part-1.json", "whole.json"}),
      {path("whole.json") + ": model #1 'tiny-lr0.001-s2' is in " + path("part-1.json") + " too"});
  // A shard's journal and its document are one part.
  expect_refused(merge({"part-1.json", "part-1.json.journal"}),
                 {path("part-1.json.journal") + ": shard 1/3, as " + path("part-1.json") + " is"});
}

TEST_F(Merge, ForeignPartsAreRefused) {
  run_shards();
  const std::vector<std::string> two = {"part-0.json", "part-1.json"};
  const auto refused = [&](const std::string& part, const std::vector<std::string>& words) {
    SCOPED_TRACE(part);
    std::vector<std::string> parts = two;
    parts.push_back(part);
    std::vector<std::string> all_words = words;
    all_words.push_back(path(part));
    expect_refused(merge(parts), all_words);
  };
  // Another sweep: its name, its size.
  ASSERT_EQ(
      run("other-name.json", "--shard 2/3", write_sweep(six_models("seven"), "seven.json")).rc, 0);
  refused("other-name.json",
          {"the sweep 'seven' of 6 models", "'six' of 6 models", "another sweep"});
  json eight = six_models();
  eight["grid"]["seed"] = {1, 2, 3, 4};
  ASSERT_EQ(run("other-size.json", "--shard 2/3", write_sweep(eight, "eight.json")).rc, 0);
  refused("other-size.json", {"'six' of 8 models", "'six' of 6 models"});
  // The same sweep run with another override: its specs, so its fingerprint, differ.
  ASSERT_EQ(run("other-epochs.json", "--shard 2/3 --epochs 1").rc, 0);
  refused("other-epochs.json", {"its models' specs differ", "other overrides"});
  // Another mode, and a --mode all document.
  ASSERT_EQ(run("streams.json", "--shard 2/3 --mode streams").rc, 0);
  refused("streams.json", {"a run in streams mode", "in serial mode", "one mode"});
  ASSERT_EQ(run("all-modes.json", "--shard 2/3 --mode all").rc, 0);
  refused("all-modes.json",
          {"a document of 4 runs (serial, streams, processes, packed; --mode all or --repeat)"});
  refused("all-modes.json.journal", {"the journal of a --mode all run"});
  // Another backend, and another model at a place: hand-made from shard 2's document.
  json doc = result("part-2.json");
  doc["backend"] = "cuda";
  std::ofstream(path("cuda.json")) << doc.dump();
  refused("cuda.json", {"trained on the cuda backend", "on the cpu backend", "one backend"});
  doc = result("part-1.json");
  doc["models"][0]["name"] = "someone-else";
  // a whole run's part, of the same sweep by its name, size and fingerprint
  doc["shard"] = nullptr;
  std::ofstream(path("renamed.json")) << doc.dump();
  refused("renamed.json", {"model #1 is 'someone-else', but in " + path("part-1.json") +
                           " it is 'tiny-lr0.001-s2'"});
}

TEST_F(Merge, ModelsThatNoPartHasAreNamedAndTheRestWritten) {
  run_shards();
  const Result r = merge({"part-0.json", "part-2.json"});
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(r.err,
            "multifit: error: 2 of the sweep's 6 models are in no part: #1, #4 (shard 1/3 is not "
            "among the "
            "parts); the document has the other 4\n");
  const json merged = result("all.json");
  ASSERT_EQ(merged["models"].size(), 4u);
  std::vector<int> places;
  for (const json& m : merged["models"]) places.push_back(m["index"]);
  EXPECT_EQ(places, std::vector<int>({0, 2, 3, 5}));
  EXPECT_EQ(merged["ranking"].size(), 4u);
}

TEST_F(Merge, BrokenPartsAreRefusedNamingTheFileAndTheLine) {
  run_shards();
  const auto refused = [&](const std::string& file, const std::string& text,
                           const std::string& why) {
    SCOPED_TRACE(file);
    if (!text.empty()) std::ofstream(path(file)) << text;
    expect_refused(merge({"part-0.json", file}), {path(file), why});
  };
  refused("missing.json", "", "no such file");
  refused("cut.json", read_file(path("part-1.json")).substr(0, 200),
          "not JSON (parse error at line");
  refused("array.json", "[1, 2]", "not a multifit result document");
  refused("other.json", R"({"name": "a spec?", "layers": []})", "not a multifit result document");
  std::string journal = read_file(path("part-1.json.journal"));
  // A bad line, not the last.
  journal.insert(journal.find('\n') + 1, "{\"mode\": \"serial\", \"ind\n");
  refused("bad.journal", journal, "bad.journal:2: not a JSON line");
  json doc = result("part-1.json");
  doc["models"][1].erase("epochs");
  refused("field.json", doc.dump(), "models[1] cannot be read: key 'epochs' not found");
  doc = result("part-1.json");
  doc["models"][1]["index"] = 2;  // not of shard 1/3
  refused("wrong-place.json", doc.dump(), "model #2 'tiny-lr0.01-s2' is not of shard 1/3");
  // A document of train, which names no sweep.
  ASSERT_EQ(multifit("train " + quoted(example("binary-classifier.json")) +
                     " --epochs 1 --quiet --json " + quoted(path("train.json")))
                .rc,
            0);
  refused("train.json", "", "a document of no sweep");
}

TEST_F(Merge, BadShardValuesAreRefused) {
  for (const std::string value :
       {"3/3", "a/b", "0/0", "-1/2", "1", "1/", "/3", "1/3/5", "2000000/2000001"}) {
    SCOPED_TRACE(value);
    const Result r = run("r.json", "--shard " + quoted(value));
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_TRUE(contains(r.err, "--shard: got " + value + "; expected")) << r.err;
    EXPECT_FALSE(fs::exists(path("r.json")));
  }
  EXPECT_TRUE(contains(run("r.json", "--shard 3/3").err,
                       "expected I from 0 to 2 for 3 parts (0-based, as a Slurm "
                       "array's %a with --array=0-2)"));
  // A shard past the sweep's models has none: said, and its document has none (a job array larger
  // than the sweep).
  const Result empty = run("r.json", "--shard 7/8");
  EXPECT_EQ(empty.rc, 0) << empty.err;
  EXPECT_TRUE(contains(empty.err, "shard 7/8 has no models: the sweep has 6")) << empty.err;
  const json doc = result("r.json");
  EXPECT_TRUE(doc["models"].empty());
  EXPECT_EQ(doc["sweep"]["models"], 6);
}

// --devices spreads a shard's own models round robin: by their places in the sweep, shard 1/2's
// (1, 3, 5) would all go to the second of two GPUs.
TEST_F(Merge, AShardSpreadsItsModelsOverItsDevices) {
  ASSERT_EQ(run("part.json", "--shard 1/2 --devices 0,1").rc, 0);
  const json doc = result("part.json");
  std::vector<int> devices;
  for (const json& m : doc["models"]) devices.push_back(m["device"]);
  EXPECT_EQ(devices, std::vector<int>({0, 1, 0}));
}

TEST_F(Merge, AShardsJournalResumesOnlyAsThatShard) {
  ASSERT_EQ(run("part.json", "--shard 1/3").rc, 0);
  std::ifstream in(path("part.json.journal"));
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(json::parse(header)["shard"], json({{"index", 1}, {"count", 3}}));
  const Result other = run("part.json", "--shard 2/3 --resume");
  EXPECT_EQ(other.rc, 2);
  EXPECT_TRUE(
      contains(other.err,
               "part.json.journal:1: a journal of shard 1/3; this run is of shard 2/3: resume "
               "with --shard 1/3"))
      << other.err;
  const Result whole = run("part.json", "--resume");
  EXPECT_EQ(whole.rc, 2);
  EXPECT_TRUE(contains(whole.err, "a journal of shard 1/3; this run is of the whole sweep"))
      << whole.err;
  const Result same = run("part.json", "--shard 1/3 --resume");
  EXPECT_EQ(same.rc, 0) << same.err;
  EXPECT_EQ(result("part.json")["resumed_models"], 2);
}

}  // namespace
