// The multifit binary end to end: exit codes (0 ok, 2 user error), one-line
// errors on stderr, and the JSON result document.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace {

using namespace cli_test;

TEST_F(Cli, TrainsTheBinaryExampleAndWritesJson) {
  const Result r = multifit("train " + quoted(example("binary-classifier.json")) +
                            " --backend cpu --json " + quoted(path("out.json")) + " --quiet");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");  // --quiet: no epoch lines
  EXPECT_TRUE(contains(r.out, "binary-classifier: test_loss")) << r.out;
  const json j = result("out.json");
  EXPECT_EQ(j["backend"], "cpu");
  ASSERT_EQ(j["models"].size(), 1u);
  const json& m = j["models"][0];
  EXPECT_EQ(m["name"], "binary-classifier");
  EXPECT_EQ(m["status"], "ok");
  EXPECT_TRUE(m["error"].is_null());
  ASSERT_EQ(m["epochs"].size(), 2u);
  for (const json& e : m["epochs"]) {
    EXPECT_TRUE(e["loss"].is_number());
    EXPECT_TRUE(e["accuracy"].is_number());
    EXPECT_TRUE(e["val_loss"].is_null());
  }
  EXPECT_EQ(m["params"], 1409);
  EXPECT_EQ(m["memory"]["cap_bytes"], 4194304);
  EXPECT_EQ(m["memory"]["reserved_bytes"], 4194304);  // mode reserve
  EXPECT_GT(m["memory"]["peak_bytes"].get<int64_t>(), 0);
  EXPECT_LE(m["memory"]["peak_bytes"].get<int64_t>(), 4194304);
  EXPECT_TRUE(m["test_accuracy"].is_number());
  for (const fs::directory_entry& file : fs::directory_iterator(dir_))
    EXPECT_FALSE(file.path().string().ends_with(".tmp")) << file.path();
}

TEST_F(Cli, ProgressLinesWithoutQuiet) {
  const Result r =
      multifit("train " + quoted(example("binary-classifier.json")) + " --backend cpu");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "Epoch 1/2")) << r.err;
  EXPECT_TRUE(contains(r.err, "Epoch 2/2")) << r.err;
}

// The CUDA kernels through host execution, end to end: the same epochs as the
// CPU backend, up to float summation order (1e-4 relative).
TEST_F(Cli, HostExecutionTrainsLikeTheCpuBackend) {
  const std::string spec = quoted(example("binary-classifier.json"));
  // 4 steps an epoch: host execution runs every thread
  const std::string data = " --data synthetic:binary:rows=256";
  ASSERT_EQ(
      multifit("train " + spec + data + " --backend cpu --quiet --json " + quoted(path("cpu.json")))
          .rc,
      0);
  const Result r = multifit("train " + spec + data + " --backend host-exec --quiet --json " +
                            quoted(path("host.json")));
  ASSERT_EQ(r.rc, 0) << r.err;
  const json cpu = result("cpu.json")["models"][0], host = result("host.json");
  EXPECT_EQ(host["backend"], "host-exec");
  ASSERT_EQ(host["models"][0]["epochs"].size(), cpu["epochs"].size());
  for (size_t e = 0; e < cpu["epochs"].size(); ++e) {
    const double want = cpu["epochs"][e]["loss"], got = host["models"][0]["epochs"][e]["loss"];
    EXPECT_NEAR(got, want, 1e-4 * want) << "epoch " << e;
  }
  const Result cublas = multifit("train " + spec + " --backend host-exec --gemm cublas --quiet");
  EXPECT_EQ(cublas.rc, 2);
  EXPECT_TRUE(contains(cublas.err, "cuBLAS needs a GPU")) << cublas.err;
  const Result cudnn =
      multifit("train " + spec + " --backend host-exec --activations cudnn --quiet");
  EXPECT_EQ(cudnn.rc, 2);
  EXPECT_TRUE(contains(cudnn.err, "cuDNN needs a GPU")) << cudnn.err;
  const Result cpu_cudnn = multifit("train " + spec + " --backend cpu --activations cudnn --quiet");
  EXPECT_EQ(cpu_cudnn.rc, 2);
  EXPECT_EQ(cpu_cudnn.err_lines(), 1) << cpu_cudnn.err;
}

// A blow-up the epoch loss never sees (taken before the update) still makes the model diverged,
// and the document says the test loss is not finite, not null (which means "no test set").
TEST_F(Cli, ABlowUpAfterTheLastLossIsDivergedAndRecordedAsInf) {
  std::ofstream(path("blowup.json")) << R"({"name": "blowup", "input": 20,
    "layers": [{"units": 32, "activation": "relu"}, {"units": 1}], "loss": "mse",
    "optimizer": {"name": "sgd", "learning_rate": 1e30}, "fit": {"epochs": 1, "batch_size": 1024}})";
  const Result r = multifit("train " + quoted(path("blowup.json")) +
                            " --data synthetic:regression --backend cpu" + " --quiet --json " +
                            quoted(path("r.json")));
  EXPECT_NE(r.rc, 0);
  EXPECT_TRUE(contains(r.out, "blowup: diverged")) << r.out;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  const json m = result("r.json")["models"][0];
  EXPECT_EQ(m["status"], "diverged");
  EXPECT_TRUE(contains(m["error"].get<std::string>(), "_loss is ")) << m["error"];
  // Overflowing products of mixed sign: the sum is inf or nan by the BLAS kernel's order of
  // accumulation (an FMA chain that reaches +inf first stays inf; partial sums of +inf and -inf
  // give nan).
  EXPECT_TRUE(m["test_loss"] == "inf" || m["test_loss"] == "nan") << m["test_loss"];
  EXPECT_TRUE(m["epochs"][0]["val_loss"].is_null());  // no validation rows: absent
}

// Whatever stage fails (spec, data, backend), --json still gets a document with the model's status
// and error; a stage never reached is null.
TEST_F(Cli, EarlyMistakesStillWriteTheResultDocument) {
  std::ofstream(path("input0.json")) << R"({"input": 0})";
  struct Case {
    std::string args, error;
  };
  const Case cases[] = {
      {quoted(path("input0.json")), "input: got 0"},
      {quoted(example("binary-classifier.json")) + " --data csv:" + quoted(path("missing.csv")),
       "missing.csv"},
  };
  for (const Case& c : cases) {
    const Result r =
        multifit("train " + c.args + " --backend cpu --quiet --json " + quoted(path("r.json")));
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    ASSERT_TRUE(fs::exists(path("r.json"))) << c.args;
    const json doc = result("r.json");
    EXPECT_EQ(doc["models"][0]["status"], "failed");
    EXPECT_TRUE(contains(doc["models"][0]["error"].get<std::string>(), c.error))
        << doc["models"][0]["error"];
    fs::remove(path("r.json"));
  }
  const Result info = multifit("info");
  if (contains(info.out, "CUDA devices: none")) {
    const Result r = multifit("train " + quoted(example("binary-classifier.json")) +
                              " --backend cuda --json " + quoted(path("r.json")));
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(result("r.json")["models"][0]["status"], "failed");
    EXPECT_TRUE(result("r.json")["backend"].is_null());
    EXPECT_TRUE(result("r.json")["startup_s"].is_null());  // never measured, not 0
    EXPECT_TRUE(result("r.json")["models"][0]["train_s"].is_null());
  }
}

// Output paths are checked before any work: nothing trains for a result that could not be kept.
TEST_F(Cli, OutputPathsAreCheckedBeforeTraining) {
  const std::string spec = quoted(example("binary-classifier.json"));
  for (const std::string flag : {"--json", "--save"}) {
    const Result r = multifit("train " + spec + " --backend cpu " + flag + " " +
                              quoted(path("no/such/dir/out")));
    EXPECT_EQ(r.rc, 2) << flag;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_TRUE(contains(r.err, flag + " ")) << r.err;
    EXPECT_TRUE(contains(r.err, "does not exist")) << r.err;
    EXPECT_EQ(r.out, "");  // nothing trained, and the one line of why is on stderr
    EXPECT_FALSE(contains(r.err, "Epoch")) << r.err;  // no progress either
  }
  // a file where its folder should be: said so, not "does not exist"
  const Result file_as_folder = multifit("train " + spec + " --backend cpu --json " +
                                         quoted(example("binary-classifier.json") + "/out.json"));
  EXPECT_EQ(file_as_folder.rc, 2);
  EXPECT_TRUE(contains(file_as_folder.err, "binary-classifier.json is not a folder"))
      << file_as_folder.err;
  const Result folder =
      multifit("train " + spec + " --backend cpu --save " + quoted(dir_.string()));
  EXPECT_EQ(folder.rc, 2);
  EXPECT_TRUE(contains(folder.err, "is a folder")) << folder.err;
}

// A spec that is a device or a pipe is refused before it is read: one line, exit 2, no hang.
TEST_F(Cli, ASpecThatNeverEndsIsRefused) {
  ASSERT_EQ(mkfifo(path("pipe.json").c_str(), 0600), 0);
  for (const std::string& spec : {std::string("/dev/zero"), path("pipe.json")}) {
    const Result r =
        multifit("train " + quoted(spec) + " --json " + quoted(path("r.json")), "timeout 20 ");
    EXPECT_EQ(r.rc, 2) << spec;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_TRUE(contains(r.err, "must be a regular file")) << r.err;
    EXPECT_EQ(result("r.json")["models"][0]["status"], "failed");
  }
}

// A label that does not fit the model is named with its file, line and value, in the right file.
TEST_F(Cli, LabelErrorsNameTheFileLineAndValue) {
  std::ofstream(path("spec.json"))
      << R"({"name": "three", "input": 2, "layers": [{"units": 3, "activation": "softmax"}],
    "loss": "sparse_categorical_crossentropy", "fit": {"epochs": 1}})";
  std::ofstream(path("good.csv")) << "a,b,label\n1,2,0\n3,4,2\n";
  std::ofstream(path("bad-test.csv")) << "1,2,1\n3,4,5\n";
  std::ofstream(path("negative.csv")) << "1,2,0\n3,4,-1\n";
  std::ofstream(path("fraction.csv")) << "1,2,1.5\n";
  struct Case {
    std::string data, error;
  };
  const Case cases[] = {
      {path("good.csv") + "," + path("bad-test.csv"), "test data '"},
      {path("good.csv") + "," + path("bad-test.csv"), path("bad-test.csv") + ":2: label 5"},
      {path("negative.csv"), path("negative.csv") + ":2: label -1"},
      {path("fraction.csv"), path("fraction.csv") + ":1: label 1.5"},
  };
  for (const Case& c : cases) {
    const Result r = multifit("train " + quoted(path("spec.json")) + " --data " +
                              quoted("csv:" + c.data) + " --backend cpu --quiet");
    EXPECT_EQ(r.rc, 2) << c.data;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_TRUE(contains(r.err, c.error)) << r.err;
  }
}

// A reservation the machine cannot give is oom, exit 2, naming the limit, the mode and what is
// there.
TEST_F(Cli, AReservationTheMachineCannotGiveIsOom) {
  const std::string spec =
      spec_from("binary-classifier.json", {{"memory", {{"limit", "4096GiB"}, {"mode", "reserve"}}}},
                "huge.json");
  const Result r =
      multifit("train " + quoted(spec) + " --backend cpu --quiet --json " + quoted(path("r.json")));
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  for (const char* part :
       {"memory.limit 4096.00 GiB", "mode reserve", "the host cannot give", "available"})
    EXPECT_TRUE(contains(r.err, part)) << part << " in " << r.err;
  EXPECT_EQ(result("r.json")["models"][0]["status"], "oom");
  const json plan = result("r.json")["models"][0]["memory"]["plan"];
  ASSERT_FALSE(plan.empty());
  EXPECT_EQ(plan[0]["name"], "parameters");
  // the 20-64-1 model's 1409 floats = 5636 B, rounded up to 256 B
  EXPECT_EQ(plan[0]["bytes"], 5888);
}

// A reserve pool on the host is resident: the document's peak RSS covers the whole limit.
TEST_F(Cli, AHostReservationIsResident) {
  const std::string spec =
      spec_from("binary-classifier.json", {{"memory", {{"limit", "96MiB"}, {"mode", "reserve"}}}},
                "reserve.json");
  const Result r =
      multifit("train " + quoted(spec) + " --backend cpu --quiet --json " + quoted(path("r.json")));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_GE(result("r.json")["host_peak_rss_bytes"].get<size_t>(), size_t(96) << 20);
}

// --epochs, --batch-size, --learning-rate and --seed override the spec, and the document says what
// ran.
TEST_F(Cli, OverridesAreAppliedAndRecorded) {
  const Result r =
      multifit("train " + quoted(example("binary-classifier.json")) +
               " --backend cpu --epochs 3 --batch-size 16 --learning-rate 0.01 --seed 7 --json " +
               quoted(path("r.json")));
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "Epoch 3/3")) << r.err;
  const json settings = result("r.json")["models"][0]["settings"];
  EXPECT_EQ(settings["epochs"], 3);
  EXPECT_EQ(settings["batch_size"], 16);
  EXPECT_EQ(settings["learning_rate"], 0.01);
  EXPECT_EQ(settings["seed"], 7);
  const Result bad =
      multifit("train " + quoted(example("binary-classifier.json")) + " --learning-rate -1");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_TRUE(contains(bad.err, "--learning-rate: got -1; expected a finite number > 0"))
      << bad.err;
}

// 0 epochs builds, evaluates and saves the initial weights, as Keras allows.
TEST_F(Cli, ZeroEpochsSavesTheInitialWeights) {
  const std::string spec = quoted(example("binary-classifier.json"));
  const Result r =
      multifit("train " + spec + " --backend cpu --epochs 0 --save " + quoted(path("w")));
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "0 epochs")) << r.out;
  EXPECT_TRUE(fs::exists(path("w")));
  EXPECT_EQ(multifit("train " + spec + " --backend cpu --epochs 0 --load " + quoted(path("w")) +
                     " --quiet")
                .out,
            r.out);  // the same initial weights: the same evaluation
}

// An output never overwrites an input or the other output.
TEST_F(Cli, OutputsMayNotOverwriteInputs) {
  const std::string spec = spec_from("binary-classifier.json", json::object(), "spec.json");
  const std::string before = read_file(spec);
  for (const std::string& flags :
       {"--json " + quoted(spec), "--save " + quoted(spec),
        "--save " + quoted(path("o")) + " --json " + quoted(path("o"))}) {
    const Result r = multifit("train " + quoted(spec) + " --backend cpu " + flags);
    EXPECT_EQ(r.rc, 2) << flags;
    EXPECT_TRUE(contains(r.err, "give the output its own file")) << r.err;
  }
  EXPECT_EQ(read_file(spec), before);
}

// Overrides obey the spec's rules: a rate that is 0 or infinite as a float, or a negative seed, is
// refused.
TEST_F(Cli, OverridesAreValidatedLikeTheSpec) {
  const std::string spec = quoted(example("binary-classifier.json"));
  for (const std::string flag : {"--learning-rate 1e39", "--learning-rate 1e-50", "--seed -1",
                                 "--epochs 99999999999", "--batch-size 0"}) {
    const Result r = multifit("train " + spec + " " + flag);
    EXPECT_EQ(r.rc, 2) << flag;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_TRUE(contains(r.err, "expected")) << r.err;
  }
}

TEST_F(Cli, AMistypedCommandIsNamed) {
  const Result r = multifit("trian " + quoted(example("binary-classifier.json")));
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err,
            "multifit: error: unknown command 'trian' (did you mean train?); the commands are "
            "train, run, merge and info\n");
}

TEST_F(Cli, AnUnknownFlagIsNamed) {
  const Result r = multifit("train " + quoted(example("binary-classifier.json")) + " --epoch 3");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err,
            "multifit: error: unknown flag --epoch (did you mean --epochs?); see 'multifit train "
            "--help'\n");
}

// An epoch under a second shows milliseconds, not "0.00s".
TEST_F(Cli, ShortEpochsShowMilliseconds) {
  const Result r =
      multifit("train " + quoted(example("binary-classifier.json")) + " --backend cpu");
  EXPECT_EQ(r.rc, 0);
  EXPECT_TRUE(contains(r.err, "ms - loss: ")) << r.err;
  EXPECT_FALSE(contains(r.err + r.out, "0.00s")) << r.err << r.out;
}

// Several target columns: multi-output mse and multi-label binary cross-entropy learn from CSV
// files.
TEST_F(Cli, SeveralTargetColumnsTrain) {
  std::ofstream sums(path("sums.csv")), halves(path("halves.csv"));
  for (int i = 0; i < 256; ++i) {
    const double a = (i % 16) / 16.0, b = (i / 16) / 16.0;
    sums << a << ',' << b << ',' << a + b << ',' << a - b << '\n';  // 2 features, 2 targets
    // 2 features, 2 labels
    halves << a << ',' << b << ',' << (a >= 0.5) << ',' << (b >= 0.5) << '\n';
  }
  sums.close();
  halves.close();
  const json layers = {{{"units", 16}, {"activation", "tanh"}},
                       {{"units", 2}, {"activation", "linear"}}};
  const json common = {{"input", 2},
                       {"targets", 2},
                       {"fit", {{"epochs", 40}}},
                       {"optimizer", {{"name", "adam"}, {"learning_rate", 0.01}}}};
  json mse = common, bce = common;
  mse["layers"] = layers;
  bce["layers"] = layers;
  bce["layers"][1]["activation"] = "sigmoid";
  bce["loss"] = "binary_crossentropy";
  const std::string runs[][2] = {{spec_from("regressor.json", mse, "mse.json"), "sums.csv"},
                                 {spec_from("regressor.json", bce, "bce.json"), "halves.csv"}};
  for (const auto& [spec, data] : runs) {
    const Result r = multifit("train " + quoted(spec) + " --data " + quoted("csv:" + path(data)) +
                              " --backend cpu --quiet --json " + quoted(path("r.json")));
    ASSERT_EQ(r.rc, 0) << r.err;
    const json epochs = result("r.json")["models"][0]["epochs"];
    EXPECT_LT(epochs.back()["loss"].get<double>(), 0.5 * epochs.front()["loss"].get<double>())
        << data;
  }
}

TEST_F(Cli, InfoExitsZero) {
  const Result r = multifit("info");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "CUDA devices") || contains(r.out, "cuda:0")) << r.out;
  EXPECT_TRUE(contains(r.out, "cpu ")) << r.out;
}

TEST_F(Cli, InfoNamesTheLibrariesItCanLoad) {
  const Result r = multifit("info");
  EXPECT_TRUE(contains(r.out, "OpenBLAS: /")) << r.out;  // loaded: the path it was found at
  EXPECT_TRUE(contains(r.out, "cuBLAS: ")) << r.out;     // a path, or why it cannot be loaded
}

// OpenBLAS's work buffer needs 129 MiB of address space; a limit that leaves less is refused in one
// line, where OpenBLAS on its own would retry forever. --help needs no BLAS at all.
TEST_F(Cli, AnAddressSpaceLimitTooLowForOpenBlasIsAUserError) {
  const std::string spec = quoted(example("binary-classifier.json"));
  const Result r =
      multifit("train " + spec + " --backend cpu --quiet", "ulimit -v 150000; timeout 20 ");
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "ulimit -v")) << r.err;
  EXPECT_EQ(multifit("--help", "ulimit -v 150000; timeout 20 ").rc, 0);
}

// At any address-space limit a run works or fails at once naming the limit: never a hang.
TEST_F(Cli, EveryAddressSpaceLimitEndsQuicklyAndClearly) {
  const std::string spec = quoted(example("binary-classifier.json"));
  for (int kib : {60000, 120000, 180000, 250000, 400000, 800000}) {
    const Result r = multifit("train " + spec + " --backend cpu --quiet",
                              "ulimit -v " + std::to_string(kib) + "; timeout 10 ");
    EXPECT_TRUE(r.rc == 0 || r.rc == 2) << "ulimit -v " << kib << ": exit " << r.rc << " " << r.err;
    if (r.rc == 2) {
      EXPECT_EQ(r.err_lines(), 1) << r.err;
      EXPECT_TRUE(contains(r.err, "ulimit -v") || contains(r.err, "memory")) << r.err;
    }
  }
}

TEST_F(Cli, TheTinyModelTrainsUnderAOneGigabyteAddressSpaceLimit) {
  const std::string spec = quoted(example("binary-classifier.json"));
  const Result r =
      multifit("train " + spec + " --backend cpu --quiet", "ulimit -v 1000000; timeout 20 ");
  EXPECT_EQ(r.rc, 0) << r.err;
}

TEST_F(Cli, CudaBackendWithoutADeviceIsAUserError) {
  const Result info = multifit("info");
  if (!contains(info.out, "CUDA devices: none")) GTEST_SKIP() << "a CUDA device is present";
  const Result r =
      multifit("train " + quoted(example("binary-classifier.json")) + " --backend cuda --quiet");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "cuda")) << r.err;
}

TEST_F(Cli, MalformedSpecIsOneLineNamingThePath) {
  std::ofstream(path("bad.json")) << R"({"input": 4, "layers": [{"units": 0}], "loss": "mse"})";
  const Result r = multifit("train " + quoted(path("bad.json")) + " --backend cpu");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "layers[0].units")) << r.err;
  EXPECT_TRUE(contains(r.err, path("bad.json"))) << r.err;
}

TEST_F(Cli, InvalidJsonIsAUserError) {
  std::ofstream(path("bad.json")) << "{\"input\": 4,";
  const Result r = multifit("train " + quoted(path("bad.json")) + " --backend cpu");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
}

TEST_F(Cli, MissingSpecFile) {
  const Result r = multifit("train " + quoted(path("nope.json")) + " --backend cpu");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_TRUE(contains(r.err, path("nope.json"))) << r.err;
}

TEST_F(Cli, UnknownFlag) {
  const Result r = multifit("train " + quoted(example("binary-classifier.json")) + " --frobnicate");
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "frobnicate")) << r.err;
}

TEST_F(Cli, NoSubcommand) { EXPECT_EQ(multifit("").rc, 2); }

TEST_F(Cli, BadBackendName) {
  EXPECT_EQ(multifit("train " + quoted(example("binary-classifier.json")) + " --backend tpu").rc,
            2);
}

TEST_F(Cli, UnknownSyntheticKind) {
  const Result r = multifit("train " + quoted(example("binary-classifier.json")) +
                            " --backend cpu --data synthetic:nope");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "nope")) << r.err;
}

TEST_F(Cli, MemoryLimitTooSmallIsOomWithJson) {
  const std::string spec =
      spec_from("binary-classifier.json", {{"memory", {{"limit", 1024}}}}, "tiny.json");
  const Result r = multifit("train " + quoted(spec) + " --backend cpu --quiet --json " +
                            quoted(path("out.json")));
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "binary-classifier")) << r.err;
  EXPECT_TRUE(contains(r.err, "1.00 KiB")) << r.err;  // the cap, as format_bytes writes it
  ASSERT_TRUE(fs::exists(path("out.json")));
  const json doc = result("out.json");
  const json& m = doc["models"][0];
  EXPECT_EQ(m["status"], "oom");
  EXPECT_TRUE(m["error"].is_string());
  EXPECT_EQ(m["memory"]["cap_bytes"], 1024);
  EXPECT_EQ(m["epochs"].size(), 0u);
}

TEST_F(Cli, SaveThenLoad) {
  const Result saved =
      multifit("train " + quoted(example("regressor.json")) + " --backend cpu --quiet --save " +
               quoted(path("w.mfw")) + " --json " + quoted(path("first.json")));
  ASSERT_EQ(saved.rc, 0) << saved.err;
  ASSERT_TRUE(fs::exists(path("w.mfw")));

  const std::string one_epoch = spec_from("regressor.json", {{"fit", {{"epochs", 1}}}}, "one.json");
  const Result loaded = multifit("train " + quoted(one_epoch) + " --backend cpu --quiet --load " +
                                 quoted(path("w.mfw")) + " --json " + quoted(path("loaded.json")));
  ASSERT_EQ(loaded.rc, 0) << loaded.err;
  const Result fresh = multifit("train " + quoted(one_epoch) + " --backend cpu --quiet --json " +
                                quoted(path("fresh.json")));
  ASSERT_EQ(fresh.rc, 0) << fresh.err;
  // Starting from the trained weights, the first epoch continues where training stopped:
  // its loss is below that of the first epoch from the random initialisation.
  const double loaded_loss = result("loaded.json")["models"][0]["epochs"][0]["loss"];
  const double fresh_loss = result("fresh.json")["models"][0]["epochs"][0]["loss"];
  EXPECT_LT(loaded_loss, fresh_loss);
}

TEST_F(Cli, LoadingWeightsOfAnotherSpecFails) {
  const Result saved = multifit("train " + quoted(example("regressor.json")) +
                                " --backend cpu --quiet --save " + quoted(path("w.mfw")));
  ASSERT_EQ(saved.rc, 0) << saved.err;
  const Result r = multifit("train " + quoted(example("binary-classifier.json")) +
                            " --backend cpu --quiet --load " + quoted(path("w.mfw")) + " --json " +
                            quoted(path("out.json")));
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_TRUE(contains(r.err, path("w.mfw"))) << r.err;
  EXPECT_EQ(result("out.json")["models"][0]["status"], "failed");
}

}  // namespace
