// --inject-fault on models with preprocessing, whose input pipelines' workers are preparing batches
// when the fault comes (nn/input_pipeline.h): the run ends as it does without a pipeline, with its
// document and its exit code, never in std::terminate (SIGABRT, "terminate called").
#include <csignal>

#include "cli_support.h"

namespace {

using namespace cli_test;

class PipelineFaults : public Cli {
 protected:
  // Three models of 16 features read as 4x4 images, flipped and noised on the host by 3 workers
  // each, 4 batches ahead; enough epochs that the others still train when m-s2 faults.
  std::string sweep() const {
    const json doc = {
        {"name", "three"},
        {"base",
         {{"name", "m"},
          {"data", "synthetic:teacher:rows=512,features=16,classes=3"},
          {"input", 16},
          {"input_shape", {4, 4, 1}},
          {"preprocessing",
           {{{"type", "RandomFlip"}}, {{"type", "GaussianNoise"}, {"stddev", 0.05}}}},
          {"pipeline", {{"workers", 3}, {"prefetch", 4}}},
          {"layers",
           {{{"units", 16}, {"activation", "relu"}}, {{"units", 3}, {"activation", "softmax"}}}},
          {"loss", "sparse_categorical_crossentropy"},
          {"fit", {{"epochs", 20}, {"batch_size", 32}}}}},
        {"grid", {{"seed", {1, 2, 3}}}}};
    std::ofstream(path("sweep.json")) << doc.dump(2);
    return quoted(path("sweep.json"));
  }
};

// In processes mode the faulting model's worker dies alone: the document says how, the others
// trained through their pipelines, and the run exits 1.
TEST_F(PipelineFaults, AFaultInProcessesModeEndsWithTheDocument) {
  const Result r = multifit("run " + sweep() +
                            " --backend cpu --quiet --mode processes --inject-fault m-s2 --json " +
                            quoted(path("p.json")));
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_FALSE(contains(r.err, "terminate called")) << r.err;
  const json doc = result("p.json");
  EXPECT_EQ(doc["injected_fault"], "m-s2");
  EXPECT_EQ(doc["models"][1]["status"], "failed");
  EXPECT_TRUE(contains(doc["models"][1]["error"], "killed by signal 11 (SIGSEGV)"))
      << doc["models"][1]["error"];
  for (const int i : {0, 2}) {
    const json& m = doc["models"][i];
    EXPECT_EQ(m["status"], "ok") << i;
    EXPECT_EQ(m["settings"]["pipeline_workers"], 3) << i;
    ASSERT_EQ(m["epochs"].size(), 20u) << i;
    EXPECT_GT(m["epochs"][0]["input_busy_s"].get<double>(), 0) << "its pipeline prepared batches";
  }
}

// In an in-process mode the fault (SIGSEGV on the CPU) ends the one process, whose pipelines'
// workers are running: it ends by that signal, as without a pipeline, not by SIGABRT.
TEST_F(PipelineFaults, AFaultInAnInProcessModeEndsByItsOwnSignal) {
  for (const std::string mode : {"serial", "streams"}) {
    const Result r = multifit("run " + sweep() + " --backend cpu --quiet --mode " + mode +
                              " --inject-fault m-s2 --json " + quoted(path(mode + ".json")));
    EXPECT_EQ(r.rc, 128 + SIGSEGV) << mode << ": " << r.err;
    EXPECT_FALSE(contains(r.err, "terminate called")) << mode << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "multifit: --inject-fault: m-s2 faults now, after its first epoch"))
        << mode << ": " << r.err;
  }
}

}  // namespace
