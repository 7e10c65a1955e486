// The command line itself: the options `train` and `run` share, --version, the near miss a mistyped
// flag or command is told, a sweep given to `train`, a size without a unit, and what --help says.
#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli_support.h"

namespace {

using namespace cli_test;

const std::string kBinary = quoted(example("binary-classifier.json"));
const std::string kPair = quoted(example("seed-pair.json"));

// Every option that means the same for one model as for a sweep is in both commands' help.
TEST_F(Cli, BothCommandsTakeTheSameOverridesAndOutputs) {
  const std::string train = multifit("train --help").out, run = multifit("run --help").out;
  for (const char* flag :
       {"--epochs", "--batch-size", "--learning-rate", "--seed", "--memory-limit", "--memory ",
        "--data", "--backend", "--gemm", "--activations", "--graphs", "--threads", "--json",
        "--csv", "--trace", "--quiet"}) {
    EXPECT_TRUE(contains(train, std::string("  ") + flag)) << flag << " missing from train --help";
    EXPECT_TRUE(contains(run, std::string("  ") + flag)) << flag << " missing from run --help";
  }
}

// run's --learning-rate and --seed replace every model's, as train's replace its model's.
TEST_F(Cli, RunTakesTheLearningRateAndSeedOverrides) {
  const Result r = multifit(
      "run " + kPair + " --backend cpu --quiet --epochs 1 --learning-rate 0.01 --seed 7 --json " +
      quoted(path("r.json")));
  ASSERT_EQ(r.rc, 0) << r.err;
  const json models = result("r.json")["models"];
  ASSERT_EQ(models.size(), 2u);
  for (const json& m : models) {
    EXPECT_EQ(m["settings"]["learning_rate"], 0.01) << m["name"];
    EXPECT_EQ(m["settings"]["seed"], 7) << m["name"];
  }
}

// train's --memory-limit and --memory replace the spec's (4MiB, reserve in the example).
TEST_F(Cli, TrainTakesTheMemoryOverrides) {
  const Result r = multifit("train " + kBinary +
                            " --backend cpu --quiet --memory-limit 8MiB --memory grow --json " +
                            quoted(path("r.json")));
  ASSERT_EQ(r.rc, 0) << r.err;
  const json m = result("r.json")["models"][0];
  EXPECT_EQ(m["memory"]["cap_bytes"], 8u << 20);
  EXPECT_EQ(m["settings"]["memory_mode"], "grow");
  // grow: what it needed, not the limit
  EXPECT_LT(m["memory"]["reserved_bytes"].get<size_t>(), size_t(8) << 20);
  // And a limit the model does not fit in is oom, as in the spec.
  const Result small = multifit("train " + kBinary + " --backend cpu --quiet --memory-limit 1KiB");
  EXPECT_EQ(small.rc, 2);
  EXPECT_TRUE(contains(small.err, "memory.limit is 1.00 KiB")) << small.err;
}

// train writes the CSV row and the trace of its one model, as run does of each.
TEST_F(Cli, TrainWritesCsvAndTrace) {
  const Result r = multifit("train " + kBinary + " --backend cpu --quiet --csv " +
                            quoted(path("r.csv")) + " --trace " + quoted(path("t.json")));
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string csv = read_file(path("r.csv"));
  EXPECT_TRUE(csv.starts_with("run_mode,")) << csv;
  EXPECT_TRUE(contains(csv, "\nserial,cpu,")) << csv;
  EXPECT_TRUE(contains(csv, ",binary-classifier,ok,")) << csv;
  const json trace = json::parse(read_file(path("t.json")));
  size_t steps = 0;
  for (const json& event : trace["traceEvents"])
    if (event.value("ph", "") == "X") ++steps;
  EXPECT_GT(steps, 0u) << trace.dump().substr(0, 400);
  // The outputs are checked before the work, like --json.
  const Result bad =
      multifit("train " + kBinary + " --backend cpu --csv " + quoted(path("no/such/dir/r.csv")));
  EXPECT_EQ(bad.rc, 2);
  EXPECT_TRUE(contains(bad.err, "--csv ")) << bad.err;
  EXPECT_FALSE(contains(bad.out, "test_loss")) << bad.out;
}

// A model with preprocessing trains through its input pipeline: its epoch line gives the input
// wait, its document the pipeline's settings and times, its trace a track of the batches prepared;
// processes mode (the spec sent to a child) gives the serial run's numbers.
TEST_F(Cli, AModelWithPreprocessingReportsItsInputPipeline) {
  const std::string spec =
      spec_from("binary-classifier.json",
                json::parse(R"({"input_shape": [4, 5, 1], "pipeline": {"workers": 2, "prefetch": 3},
                                                     "preprocessing": [{"type": "RandomFlip", "mode": "horizontal"},
                                                                       {"type": "GaussianNoise", "stddev": 0.1}]})"),
                "augmented.json");
  const Result r = multifit("train " + quoted(spec) + " --backend cpu --threads 5 --json " +
                            quoted(path("r.json")) + " --trace " + quoted(path("t.json")));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out + r.err, " samples/s - input wait ")) << r.out << r.err;
  const json m = result("r.json")["models"][0];
  EXPECT_EQ(m["settings"]["pipeline_workers"], 2);
  EXPECT_EQ(m["settings"]["prefetch"], 3);
  EXPECT_EQ(m["settings"]["threads"], 3) << "the pipeline's 2 workers count against the 5 threads";
  for (const json& e : m["epochs"]) EXPECT_GT(e["input_busy_s"].get<double>(), 0) << e.dump();
  // The batches' slices, on tracks "NAME input" (and "NAME input 2" where the two workers
  // overlapped), none overlapping another on its track: a trace's slices on one track must nest.
  const json trace = json::parse(read_file(path("t.json")));
  std::map<int, std::vector<std::pair<double, double>>> batches;  // by track (tid)
  std::set<int> input_tracks;
  for (const json& event : trace["traceEvents"])
    if (event.value("ph", "") == "M" &&
        contains(event["args"].value("name", ""), m["name"].get<std::string>() + " input"))
      input_tracks.insert(event["tid"].get<int>());
  ASSERT_FALSE(input_tracks.empty()) << trace.dump().substr(0, 600);
  size_t batch_slices = 0;
  for (const json& event : trace["traceEvents"])
    if (event.value("ph", "") == "X" && input_tracks.count(event["tid"].get<int>())) {
      EXPECT_EQ(event["name"], "batch");
      batches[event["tid"].get<int>()].push_back(
          {event["ts"].get<double>(), event["ts"].get<double>() + event["dur"].get<double>()});
      ++batch_slices;
    }
  EXPECT_EQ(batch_slices, 2u * 16) << "2 epochs of 16 batches (1024 rows of 64)";
  for (auto& [tid, slices] : batches) {
    std::sort(slices.begin(), slices.end());
    for (size_t i = 1; i < slices.size(); ++i)
      EXPECT_LE(slices[i - 1].second, slices[i].first) << "track " << tid;
  }

  const Result processes =
      multifit("run " + quoted(spec) + " --backend cpu --mode processes --threads 6 --json " +
               quoted(path("p.json")));
  ASSERT_EQ(processes.rc, 0) << processes.err;
  EXPECT_TRUE(contains(processes.out, " process peak input wait"))
      << "the table's column" << processes.out;
  const json p = result("p.json")["models"][0];
  EXPECT_EQ(p["settings"]["threads"], 4) << "the worker's 6 threads, less its pipeline's 2";
  ASSERT_EQ(p["epochs"].size(), m["epochs"].size());
  for (size_t e = 0; e < m["epochs"].size(); ++e)
    EXPECT_EQ(p["epochs"][e]["loss"], m["epochs"][e]["loss"]) << e;
  EXPECT_EQ(p["test_loss"], m["test_loss"]);
}

// On the command line a size needs its unit: "3" is refused, naming the flag, the value and the
// units, before any work and in one line, in both commands.
TEST_F(Cli, ASizeWithoutAUnitIsRefusedAtTheFlag) {
  for (const std::string& command : {"train " + kBinary, "run " + kPair}) {
    const std::string name = command.substr(0, command.find(' '));
    const std::string expected =
        "; expected a size with its unit, B, KB, MB, GB, TB, KiB, MiB, GiB or TiB, like 64MiB; see "
        "'multifit " +
        name + " --help'\n";
    const Result r = multifit(command + " --backend cpu --quiet --memory-limit 3 --json " +
                              quoted(path("r.json")));
    EXPECT_EQ(r.rc, 2) << command;
    EXPECT_EQ(r.err, "multifit: error: --memory-limit: got 3, a number without a unit" + expected);
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(path("r.json")));  // the command line could not be read
    const Result e = multifit(command + " --backend cpu --quiet --memory-limit 3e5");
    EXPECT_EQ(e.err,
              "multifit: error: --memory-limit: got 3e5, a number without a unit" + expected);
    for (const std::string bad : {"12parsecs", "0.1B", "-4MiB", "4 MiB", "MiB"}) {
      const Result b = multifit(command + " --backend cpu --quiet --memory-limit " + quoted(bad));
      EXPECT_EQ(b.rc, 2) << bad;
      EXPECT_EQ(b.err, "multifit: error: --memory-limit: got " + bad + expected);
    }
  }
  // Every unit is taken; a spec's own memory.limit still reads a bare number as bytes.
  for (const std::string good :
       {"4194304B", "4200KB", "5MB", "1GB", "4096KiB", "4MiB", "1GiB", "4.5MiB"}) {
    const Result r =
        multifit("train " + kBinary +
                 " --backend cpu --quiet --epochs 0 --memory grow --memory-limit " + good);
    EXPECT_EQ(r.rc, 0) << good << ": " << r.err;
  }
  const std::string spec =
      spec_from("binary-classifier.json", {{"memory", {{"limit", "8388608"}}}}, "bare.json");
  const Result r =
      multifit("train " + quoted(spec) + " --backend cpu --quiet --json " + quoted(path("r.json")));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(result("r.json")["models"][0]["memory"]["cap_bytes"], 8388608);
}

// The flags that share a GPU's SMs are refused on a backend without one: one line, exit 2, the
// document written with the error and no model trained.
TEST_F(Cli, SmFlagsAreRefusedOnTheCpuBackend) {
  for (const std::string flags : {"--mode streams --sm-partitions 2", "--mode processes --mps on",
                                  "--mode processes --sm-share 50"}) {
    const Result r = multifit("run " + kPair + " --backend cpu --quiet " + flags + " --json " +
                              quoted(path("r.json")));
    EXPECT_EQ(r.rc, 2) << flags;
    const std::string flag = flags.substr(flags.find(" --") + 1);
    EXPECT_EQ(r.err, "multifit: error: " + flag +
                         ": the cpu backend has no GPU whose SMs it could share; give --backend "
                         "cuda on a machine with a GPU, or drop the flag\n");
    EXPECT_EQ(result("r.json")["models"].size(), 0u) << flags;
  }
}

TEST_F(Cli, VersionPrintsTheVersionAndTheCommit) {
  const Result r = multifit("--version");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(std::regex_match(
      r.out,
      std::regex(R"(multifit \d+\.\d+\.\d+ \(commit ([0-9a-f]+(\+changes)?|unknown)\), with.*\n)")))
      << r.out;
  // The same words as info's build line.
  const Result info = multifit("info");
  EXPECT_TRUE(contains(info.out, "build:   " + r.out)) << info.out;
}

// A mistyped flag is told the closest flag of its command, when one is close; a flag of the other
// command is said to be that command's; anything else is named alone.
TEST_F(Cli, AMistypedFlagIsToldTheClosestFlag) {
  struct Case {
    std::string args, error;
  };
  const Case cases[] = {
      {"train " + kBinary + " --epoch 3",
       "unknown flag --epoch (did you mean --epochs?); see 'multifit train --help'"},
      {"train " + kBinary + " --learnig-rate 0.1",
       "unknown flag --learnig-rate (did you mean --learning-rate?); see 'multifit train --help'"},
      {"train " + kBinary + " --laod w",
       "unknown flag --laod (did you mean --load?); see 'multifit train --help'"},
      {"train " + kBinary + " --epoch=3",
       "unknown flag --epoch=3 (did you mean --epochs?); see 'multifit train --help'"},
      {"run " + kPair + " --calibration-step 5",
       "unknown flag --calibration-step (did you mean --calibration-steps?); see 'multifit run "
       "--help'"},
      {"run " + kPair + " --memory-limt 4MiB",
       "unknown flag --memory-limt (did you mean --memory-limit?); see 'multifit run --help'"},
      {"--verison", "unknown flag --verison (did you mean --version?); see 'multifit --help'"},
      {"train " + kBinary + " --mode packed",
       "unknown flag --mode (a flag of multifit run, not of multifit train); see 'multifit train "
       "--help'"},
      {"run " + kPair + " --save w",
       "unknown flag --save (a flag of multifit train, not of multifit run); see 'multifit run "
       "--help'"},
      {"train " + kBinary + " --frobnicate",
       "unknown flag --frobnicate; see 'multifit train --help'"},
      {"train " + kBinary + " --lr 0.1", "unknown flag --lr; see 'multifit train --help'"},
      {"trian " + kBinary,
       "unknown command 'trian' (did you mean train?); the commands are train, run, merge and "
       "info"},
      {"rnu " + kPair,
       "unknown command 'rnu' (did you mean run?); the commands are train, run, merge and info"},
      {"fit " + kBinary, "unknown command 'fit'; the commands are train, run, merge and info"},
  };
  for (const Case& c : cases) {
    const Result r = multifit(c.args);
    EXPECT_EQ(r.rc, 2) << c.args;
    EXPECT_EQ(r.err, "multifit: error: " + c.error + "\n") << c.args;
  }
}

// A sweep given to train is named as one, with the command that runs it; the document says so too.
TEST_F(Cli, TrainGivenASweepSaysToUseRun) {
  for (const std::string name :
       {"tiny-sweep.json", "seed-pair.json"}) {  // a grid, a list of models
    const std::string sweep = example(name);
    const Result r =
        multifit("train " + quoted(sweep) + " --backend cpu --json " + quoted(path("r.json")));
    EXPECT_EQ(r.rc, 2) << name;
    const std::string error =
        sweep +
        " is a sweep; train one model with multifit train SPEC, or the sweep with "
        "multifit run " +
        sweep;
    EXPECT_EQ(r.err, "multifit: error: " + error + "\n");
    EXPECT_EQ(result("r.json")["models"][0]["error"], error);
  }
  // A spec is still a spec, even with a key a sweep has: its parser names the key.
  const std::string spec =
      spec_from("binary-classifier.json", {{"grid", {{"seed", {1, 2}}}}}, "spec.json");
  const Result r = multifit("train " + quoted(spec) + " --backend cpu");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "grid: unknown key")) << r.err;
}

// --help says what the seed seeds: the weights, the shuffles and Dropout's masks; synthetic data
// has its own seed, which neither the spec's seed nor --seed changes.
TEST_F(Cli, HelpSaysWhatTheSeedSeeds) {
  for (const std::string command : {"train", "run"}) {
    const std::string help = multifit(command + " --help").out;
    EXPECT_TRUE(
        contains(help,
                 "--seed UINT                 Override seed, which draws the initial weights, "
                 "each epoch's shuffle and Dropout's masks; synthetic data has a seed of its own"))
        << help;
    EXPECT_FALSE(contains(help, "INT:INT")) << help;  // each type once
    EXPECT_TRUE(contains(
        help,
        "seed (the data's own, 1234 unless given: the spec's seed and --seed do not change it)"))
        << help;
  }
  const std::string reference = multifit("train --help").out;
  EXPECT_FALSE(contains(reference, "shuffles and synthetic data")) << reference;
  EXPECT_TRUE(
      contains(reference,
               "\"seed\": 0                         the initial weights, each epoch's shuffle and "
               "Dropout's masks;\n"))
      << reference;
  // What the help says is so: the data is the same whatever --seed, the weights are not.
  std::vector<json> runs;
  for (const char* seed : {"1", "2"}) {
    const Result r =
        multifit("train " + kBinary + " --backend cpu --quiet --data synthetic:binary --seed " +
                 seed + " --json " + quoted(path("r.json")));
    ASSERT_EQ(r.rc, 0) << r.err;
    runs.push_back(result("r.json"));
  }
  EXPECT_EQ(runs[0]["data"]["source"], runs[1]["data"]["source"]);
  EXPECT_TRUE(contains(runs[0]["data"]["source"], "seed=1234")) << runs[0]["data"];
  EXPECT_NE(runs[0]["models"][0]["epochs"][0]["loss"], runs[1]["models"][0]["epochs"][0]["loss"]);
}

}  // namespace
