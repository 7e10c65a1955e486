// `multifit run` end to end on the CPU backend and through host execution: every mode gives each
// model the numbers of its solo `train`; the document's fields obey their consistency rules;
// workers are spawned with their devices; serial releases memory; faults stay with their model.
#include <chrono>
#include <csignal>
#include <set>

#include "cli_support.h"

namespace {

using namespace cli_test;

// A small model that trains for a long time (200 epochs of 100000 rows, ~10 s), to be stopped or
// killed.
const json kSlowModel = {
    {"name", "slow"},
    {"data", "synthetic:binary:rows=100000"},
    {"input", 20},
    {"layers",
     {{{"units", 64}, {"activation", "relu"}}, {{"units", 1}, {"activation", "sigmoid"}}}},
    {"loss", "binary_crossentropy"},
    {"fit", {{"epochs", 200}, {"batch_size", 64}}}};

class Run : public Cli {
 protected:
  std::string sweep(const json& doc, const std::string& file = "sweep.json") const {
    std::ofstream(path(file)) << doc.dump(2);
    return quoted(path(file));
  }
  // The models of a model-list sweep from the examples, each changed by a merge patch.
  json example_spec(const std::string& name, const json& changes = json::object()) const {
    json spec = json::parse(read_file(example(name)));
    spec.merge_patch(changes);
    return spec;
  }
  // Starts `multifit ARGS` in the background, runs `then` (shell, with $p the multifit pid) and
  // waits.
  Result in_background(const std::string& args, const std::string& then) const {
    return multifit(args + " & p=$!; " + then + "; wait $p", "");
  }
};

const json* model_named(const json& run, const std::string& name) {
  for (const json& m : run["models"])
    if (m["name"] == name) return &m;
  return nullptr;
}

TEST_F(Run, EveryModeGivesEachModelItsSoloTrainNumbers) {
  const Result r =
      multifit("run " + quoted(example("seed-pair.json")) +
               " --mode all --backend cpu --quiet --json " + quoted(path("r.json")) + " --csv " +
               quoted(path("r.csv")) + " --trace " + quoted(path("t.json")));
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = result("r.json");
  ASSERT_EQ(doc["mode"], "all");
  // serial, streams, processes, packed (two shapes: two packs of one)
  ASSERT_EQ(doc["runs"].size(), 4u);
  for (const std::string name : {"binary-classifier", "regressor"}) {
    const Result solo = multifit("train " + quoted(example(name + ".json")) +
                                 " --backend cpu --quiet --json " + quoted(path(name + ".json")));
    ASSERT_EQ(solo.rc, 0) << solo.err;
    const json alone = result(name + ".json")["models"][0];
    for (const json& run : doc["runs"]) {
      SCOPED_TRACE(run["mode"].get<std::string>() + " " + name);
      const json* m = model_named(run, name);
      ASSERT_NE(m, nullptr);
      EXPECT_EQ((*m)["status"], "ok");
      // bit-identical: the same float printed the same
      EXPECT_EQ((*m)["test_loss"], alone["test_loss"]);
      EXPECT_EQ((*m)["test_accuracy"], alone["test_accuracy"]);
      ASSERT_EQ((*m)["epochs"].size(), alone["epochs"].size());
      for (size_t e = 0; e < alone["epochs"].size(); ++e)
        EXPECT_EQ((*m)["epochs"][e]["loss"], alone["epochs"][e]["loss"]);
    }
  }
  // The consistency rules: slowdown = train_s / solo_s, speedup = serial wall / wall, models within
  // the wall.
  const double serial_wall = doc["runs"][0]["wall_s"];
  for (const json& run : doc["runs"]) {
    SCOPED_TRACE(run["mode"].get<std::string>());
    EXPECT_EQ(run["backend"], "cpu");
    EXPECT_NEAR(run["speedup_vs_serial"].get<double>(), serial_wall / run["wall_s"].get<double>(),
                1e-9);
    const double overlap = run["overlap"]["fraction"];
    EXPECT_GE(overlap, 0.0);
    EXPECT_LE(overlap, 1.0);
    EXPECT_LE(run["overlap"]["concurrent_s"].get<double>(), run["overlap"]["busy_s"].get<double>());
    EXPECT_EQ(run["overlap"]["kind"], "concurrent");  // the cpu's threads and processes run at once
    EXPECT_TRUE(run["mps"].is_null());
    EXPECT_TRUE(run["device_schedule"].is_null());
    EXPECT_TRUE(run["gpu"].is_null());
    EXPECT_TRUE(contains(run["gpu_note"], "cpu")) << run["gpu_note"];
    for (const json& m : run["models"]) {
      const double train = m["train_s"], solo = m["solo_s"];
      EXPECT_NEAR(m["slowdown"].get<double>(), train / solo, 1e-9);
      EXPECT_LE(train + m["startup_s"].get<double>(), run["wall_s"].get<double>());
    }
  }
  EXPECT_EQ(doc["runs"][0]["overlap"]["fraction"], 0.0);  // serial: never two at once
  for (const json& m : doc["runs"][0]["models"]) {
    EXPECT_EQ(m["slowdown"], 1.0);
    // Released before the next model: exactly its pool goes back, the data sets stay.
    const json& memory = m["memory"];
    EXPECT_EQ(memory["in_use_before_release_bytes"].get<size_t>() -
                  memory["in_use_after_release_bytes"].get<size_t>(),
              memory["reserved_bytes"].get<size_t>());
  }
  // Processes: each worker's own peak memory, summed for the run.
  const json& by_process = doc["runs"][2];
  EXPECT_EQ(by_process["workers_peak_rss_bytes"].get<size_t>(),
            by_process["models"][0]["memory"]["process_peak_rss_bytes"].get<size_t>() +
                by_process["models"][1]["memory"]["process_peak_rss_bytes"].get<size_t>());
  EXPECT_TRUE(doc["runs"][1]["workers_peak_rss_bytes"].is_null());
  // Processes: one worker each, not this process.
  const json& processes = doc["runs"][2]["models"];
  EXPECT_NE(processes[0]["pid"], processes[1]["pid"]);
  EXPECT_NE(processes[0]["pid"], doc["runs"][1]["models"][0]["pid"]);

  // The CSV: a header and one row per model and mode.
  const std::string csv = read_file(path("r.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 4 * 2);
  EXPECT_TRUE(csv.starts_with("run_mode,")) << csv;
  // The trace: valid JSON, one named track per model and mode, steps on it.
  const json trace = result("t.json");
  std::set<std::string> tracks;
  size_t steps = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "M") tracks.insert(e["args"]["name"].get<std::string>());
    if (e["name"] == "step") ++steps;
  }
  EXPECT_EQ(tracks.size(), 8u);
  EXPECT_TRUE(tracks.count("streams: regressor"));
  EXPECT_EQ(steps, 4u * (2 * 16 + 3 * 32));  // 2 epochs of 16 steps, 3 of 32, in each mode
}

// Packed mode: tiny models of one shape, differing in learning rate and seed, train as one pack (or
// as packs of at most --pack-size), each with the numbers of its own serial run: the 32 of the
// example on the CPU, 6 of them in packs of 4 and 2 through host execution of the CUDA kernels.
// --repeat: the modes in rounds, each against its round's serial run, every run in the document
// with each mode's spread; no journal (it holds one run of each mode), and what would need one
// refused.
TEST_F(Run, RepeatRunsTheModesInRoundsAndSpreadsTheirFigures) {
  const std::string pair = quoted(example("seed-pair.json"));
  const Result r = multifit("run " + pair + " --backend cpu --quiet --mode all --repeat 2 --json " +
                            quoted(path("r.json")));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "modes side by side over their runs (2 models; median [min-max])"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "\nstreams (run 2): 2 models")) << r.out;
  const json doc = result("r.json");
  EXPECT_EQ(doc["mode"], "all");
  EXPECT_EQ(doc["repeat"], 2);
  ASSERT_EQ(doc["runs"].size(), 8u);
  std::vector<std::string> order;
  for (const json& run : doc["runs"])
    order.push_back(run["mode"].get<std::string>() + std::to_string(run["repeat"].get<int>()));
  EXPECT_EQ(order, (std::vector<std::string>{"serial1", "streams1", "processes1", "packed1",
                                             "serial2", "streams2", "processes2", "packed2"}));
  EXPECT_EQ(doc["runs"][5]["serial_wall_s"], doc["runs"][4]["wall_s"])
      << "against its own round's serial run";
  ASSERT_EQ(doc["repeats"].size(), 4u);
  EXPECT_EQ(doc["repeats"][1]["mode"], "streams");
  EXPECT_EQ(doc["repeats"][1]["runs"], 2);
  const double first = doc["runs"][1]["wall_s"], second = doc["runs"][5]["wall_s"];
  EXPECT_DOUBLE_EQ(doc["repeats"][1]["wall_s"]["min"].get<double>(), std::min(first, second));
  EXPECT_DOUBLE_EQ(doc["repeats"][1]["wall_s"]["median"].get<double>(), (first + second) / 2);
  EXPECT_FALSE(fs::exists(path("r.json.journal")));

  const Result resume =
      multifit("run " + pair + " --backend cpu --quiet --repeat 3 --resume --json " +
               quoted(path("r.json")));
  EXPECT_EQ(resume.rc, 2);
  EXPECT_TRUE(
      contains(resume.err, "--resume with --repeat 3: a journal holds one run of each mode"))
      << resume.err;
  const Result best = multifit("run " + pair + " --backend cpu --quiet --repeat 2 --save-best 1 " +
                               quoted(path("best")));
  EXPECT_EQ(best.rc, 2);
  EXPECT_TRUE(
      contains(best.err, "--save-best keeps the models of one run, and --repeat 2 makes several"))
      << best.err;
  const Result zero = multifit("run " + pair + " --backend cpu --quiet --repeat 0");
  EXPECT_EQ(zero.rc, 2);
  EXPECT_TRUE(contains(zero.err, "--repeat")) << zero.err;
}

TEST_F(Run, PackedModelsGiveTheirSerialNumbers) {
  json six = json::parse(read_file(example("tiny-sweep.json")));
  six["grid"] = {{"learning_rate", {0.001, 0.01}}, {"seed", {1, 2, 3}}};
  const std::string six_models = sweep(six);
  for (const std::string backend : {"cpu", "host-exec"}) {
    SCOPED_TRACE(backend);
    const bool cpu = backend == "cpu";
    // On the cpu, --pack-size 0 deals the models into a pack per thread.
    const size_t models = cpu ? 32 : 6, pack_size = cpu ? 16 : 4;
    const std::string run = "run " + (cpu ? quoted(example("tiny-sweep.json")) : six_models) +
                            " --epochs 1 --data synthetic:binary:rows=256 --backend " + backend +
                            " --json ";
    const Result serial = multifit(run + quoted(path("serial.json")) + " --mode serial --quiet");
    ASSERT_EQ(serial.rc, 0) << serial.err;
    // Through host execution the packs' steps are also replayed from CUDA graphs (emulated); on the
    // cpu from its recorded steps, the default, each pack on one of the two threads.
    const Result packed =
        multifit(run + quoted(path("packed.json")) + " --mode packed --pack-size " +
                 (cpu ? "0 --threads 2" : "4 --graphs on"));
    ASSERT_EQ(packed.rc, 0) << packed.err;
    EXPECT_TRUE(
        contains(packed.err, cpu ? "32 models planned in 2 packs (16, 16), apart by a full pack x1"
                                 : "6 models planned in 2 packs (4, 2), apart by a full pack x1"))
        << packed.err;
    const json alone = result("serial.json"), together = result("packed.json");
    ASSERT_EQ(together["mode"], "packed");
    ASSERT_EQ(together["models"].size(), models);
    for (size_t i = 0; i < models; ++i) {
      const json &a = alone["models"][i], &p = together["models"][i];
      SCOPED_TRACE(p["name"].get<std::string>());
      EXPECT_EQ(p["status"], "ok");
      EXPECT_EQ(p["epochs"][0]["loss"], a["epochs"][0]["loss"]);  // bit-identical
      EXPECT_EQ(p["test_loss"], a["test_loss"]);
      EXPECT_EQ(p["pack"], i / pack_size);
      EXPECT_EQ(p["pack_members"], std::min(pack_size, models - i / pack_size * pack_size));
      const std::string bound =
          cpu ? "the cpu backend's one pack per training thread, which --pack-size replaces"
              : "--pack-size 4";
      EXPECT_EQ(p["pack_boundary"], i < pack_size
                                        ? json()
                                        : json("pack 0 is full (" + std::to_string(pack_size) +
                                               " members: " + bound + ")"));
      EXPECT_TRUE(a["pack"].is_null());
      EXPECT_EQ(p["settings"]["graphs"], true);
      // auto: on a GPU and the cpu, not under host execution
      EXPECT_EQ(a["settings"]["graphs"], cpu);
      EXPECT_EQ(p["settings"]["threads"], cpu ? json(1) : json());
      // Its share of the pack's pool: its own plan, as alone.
      EXPECT_EQ(p["memory"]["peak_bytes"], a["memory"]["peak_bytes"]);
      EXPECT_EQ(p["memory"]["cap_bytes"], a["memory"]["cap_bytes"]);
    }
  }
}

// --mode auto calibrates every mode on the sweep's own models, then runs the sweep in the one whose
// predicted wall is shortest, and says why in the document. The Fashion-MNIST grid's 8 models, on
// 2048 synthetic rows of its shape (784 features, 10 classes) rather than its 60000 rows: the
// calibration times the models' steps, whatever rows they take.
TEST_F(Run, AutoPicksTheModeItsCalibrationPredictsFastest) {
  const Result r =
      multifit("run " + quoted(example("fashion-mnist-grid.json")) +
               " --data synthetic:teacher:features=784,classes=10,rows=2048"
               " --mode auto --epochs 1 --calibration-steps 20 --backend cpu --quiet --json " +
               quoted(path("r.json")));
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = result("r.json");
  const json& calibration = doc["auto"]["calibration"];
  ASSERT_EQ(calibration.size(), 4u);
  std::set<std::string> modes;
  double previous = 0;
  for (const json& c : calibration) {
    modes.insert(c["mode"].get<std::string>());
    const double wall = c["predicted_wall_s"];
    EXPECT_GE(wall, previous);  // fastest first
    EXPECT_GT(c["samples_per_s"].get<double>(), 0);
    previous = wall;
  }
  EXPECT_EQ(modes, (std::set<std::string>{"serial", "streams", "processes", "packed"}));
  EXPECT_EQ(doc["mode"], calibration[0]["mode"]);
  EXPECT_EQ(doc["auto"]["calibration_steps"], 20);
  for (const json& m : doc["models"]) {
    EXPECT_EQ(m["status"], "ok");
    EXPECT_EQ(m["epochs"].size(), 1u);  // the run itself is whole: the calibration's cap is not its
  }
}

TEST_F(Run, HostExecutionStreamsGiveTheSerialNumbers) {
  const std::string common =
      "run " + quoted(example("seed-pair.json")) +
      " --backend host-exec --quiet --data synthetic:binary:rows=128 --json ";
  const Result serial = multifit(common + quoted(path("serial.json")) + " --mode serial");
  const Result streams = multifit(common + quoted(path("streams.json")) + " --mode streams");
  ASSERT_EQ(serial.rc, 0) << serial.err;
  ASSERT_EQ(streams.rc, 0) << streams.err;
  const json a = result("serial.json"), b = result("streams.json");
  EXPECT_EQ(b["backend"], "host-exec");
  for (size_t i = 0; i < 2; ++i) {
    for (size_t e = 0; e < a["models"][i]["epochs"].size(); ++e)
      EXPECT_EQ(a["models"][i]["epochs"][e]["loss"], b["models"][i]["epochs"][e]["loss"]);
    EXPECT_EQ(a["models"][i]["test_loss"], b["models"][i]["test_loss"]);
  }
}

TEST_F(Run, WorkersAreSpawnedWithTheirDevices) {
  const std::string args =
      "run " + quoted(example("seed-pair.json")) + " --backend cpu --quiet --devices 3,5 --json ";
  const Result processes = multifit(args + quoted(path("p.json")) + " --mode processes");
  ASSERT_EQ(processes.rc, 0) << processes.err;
  const json p = result("p.json");
  EXPECT_EQ(p["models"][0]["device"], 3);
  EXPECT_EQ(p["models"][0]["cuda_visible_devices"], "3");  // set in the worker's own environment
  EXPECT_EQ(p["models"][1]["device"], 5);
  EXPECT_EQ(p["models"][1]["cuda_visible_devices"], "5");
  // Streams: the same assignment, as the stream's device, in this one process.
  const Result streams =
      multifit(args + quoted(path("s.json")) + " --mode streams", "unset CUDA_VISIBLE_DEVICES; ");
  ASSERT_EQ(streams.rc, 0) << streams.err;
  const json s = result("s.json");
  EXPECT_EQ(s["models"][1]["device"], 5);
  EXPECT_TRUE(s["models"][1]["cuda_visible_devices"].is_null());
  EXPECT_EQ(s["models"][0]["pid"], s["models"][1]["pid"]);
}

// Six models reserving 256 MiB each, under an address-space limit that fits one: serial releases
// each pool before the next and all train; at once, they get a clear oom, as in TensorFlow a second
// process gets no memory (which of them, if any, gets it first depends on the threads' own address
// space).
TEST_F(Run, SerialReleasesEachPoolBeforeTheNext) {
  json base = example_spec(
      "binary-classifier.json",
      {{"fit", {{"epochs", 1}}}, {"memory", {{"limit", "256MiB"}, {"mode", "reserve"}}}});
  const std::string six =
      sweep({{"name", "six"}, {"base", base}, {"grid", {{"seed", {1, 2, 3, 4, 5, 6}}}}});
  const std::string limit = "ulimit -v 800000; ";
  const Result serial = multifit(
      "run " + six + " --backend cpu --quiet --mode serial --json " + quoted(path("a.json")),
      limit);
  ASSERT_EQ(serial.rc, 0) << serial.err;
  const json a = result("a.json");
  for (const json& m : a["models"]) {
    EXPECT_EQ(m["status"], "ok") << m["error"];
    EXPECT_EQ(m["memory"]["reserved_bytes"], 256u << 20);
  }
  const Result streams = multifit(
      "run " + six + " --backend cpu --quiet --mode streams --json " + quoted(path("b.json")),
      limit);
  EXPECT_EQ(streams.rc, 2);
  int ok = 0, oom = 0;
  const json b = result("b.json");
  for (const json& m : b["models"]) {
    ok += m["status"] == "ok";
    if (m["status"] == "oom") {
      ++oom;
      EXPECT_TRUE(contains(m["error"], "mode reserve: the host cannot give 256.00 MiB"))
          << m["error"];
    }
  }
  EXPECT_LE(ok, 1);
  EXPECT_GE(oom, 5);
  EXPECT_EQ(ok + oom, 6);
}

TEST_F(Run, EachModelKeepsItsMemoryModeInEitherOrder) {
  const json grow = example_spec(
      "regressor.json", {{"name", "grows"}, {"memory", {{"limit", "8MiB"}, {"mode", "grow"}}}});
  const json reserve =
      example_spec("regressor.json",
                   {{"name", "reserves"}, {"memory", {{"limit", "8MiB"}, {"mode", "reserve"}}}});
  for (const json& models : {json{grow, reserve}, json{reserve, grow}}) {
    const Result r =
        multifit("run " + sweep({{"models", models}}) +
                 " --backend cpu --quiet --mode streams --json " + quoted(path("r.json")));
    ASSERT_EQ(r.rc, 0) << r.err;
    const json doc = result("r.json");
    EXPECT_EQ((*model_named(doc, "reserves"))["memory"]["reserved_bytes"], 8u << 20);
    EXPECT_LT((*model_named(doc, "grows"))["memory"]["reserved_bytes"].get<size_t>(), 8u << 20);
    EXPECT_EQ((*model_named(doc, "grows"))["settings"]["memory_mode"], "grow");
  }
}

TEST_F(Run, FaultsStayWithTheirModelAndTheOthersFinish) {
  const json models = {
      example_spec("binary-classifier.json", {{"name", "good"}}),
      example_spec("regressor.json",
                   {{"name", "diverges"}, {"optimizer", {{"learning_rate", 1e30}}}}),
      example_spec("regressor.json", {{"name", "over-cap"}, {"memory", {{"limit", "1KiB"}}}}),
      example_spec("regressor.json", {{"name", "bad"}, {"layers", {{{"units", 0}}}}})};
  const std::string faults = sweep({{"models", models}});
  for (const std::string mode : {"streams", "processes"}) {
    SCOPED_TRACE(mode);
    const Result r = multifit("run " + faults + " --backend cpu --quiet --mode " + mode +
                              " --json " + quoted(path("r.json")));
    // a user's mistake (the bad spec, the cap) ranks above a divergence
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_EQ(r.err_lines(), 3) << r.err;  // one line for each model that did not end ok
    // named once
    EXPECT_TRUE(contains(r.err, "multifit: error: model 'over-cap' needs ")) << r.err;
    const json doc = result("r.json");
    ASSERT_EQ(doc["models"].size(), 4u);
    EXPECT_EQ(doc["models"][0]["status"], "ok");
    EXPECT_EQ(doc["models"][0]["test_accuracy"].is_number(), true);
    EXPECT_EQ(doc["models"][1]["status"], "diverged");
    EXPECT_TRUE(contains(doc["models"][1]["error"], "lower optimizer.learning_rate"))
        << doc["models"][1]["error"];
    EXPECT_EQ(doc["models"][2]["status"], "oom");
    EXPECT_TRUE(contains(doc["models"][2]["error"], "1.00 KiB")) << doc["models"][2]["error"];
    EXPECT_TRUE(doc["models"][2]["train_s"].is_null());  // caught before anything trained
    EXPECT_EQ(doc["models"][3]["status"], "failed");
    EXPECT_TRUE(contains(doc["models"][3]["error"], "models[3]")) << doc["models"][3]["error"];
    EXPECT_TRUE(contains(doc["models"][3]["error"], "units")) << doc["models"][3]["error"];
  }
}

// Three models whose pools each reserve 1 MiB, trained for a few epochs: what serial mode holds
// between them, released or kept.
json three_reserving(int epochs = 2) {
  return {{"name", "three"},
          {"base",
           {{"name", "m"},
            {"data", "synthetic:teacher:rows=512,features=16,classes=3"},
            {"input", 16},
            {"layers",
             {{{"units", 16}, {"activation", "relu"}}, {{"units", 3}, {"activation", "softmax"}}}},
            {"loss", "sparse_categorical_crossentropy"},
            {"fit", {{"epochs", epochs}, {"batch_size", 64}}},
            {"memory", {{"limit", "1MiB"}, {"mode", "reserve"}}}}},
          {"grid", {{"seed", {1, 2, 3}}}}};
}

// --keep-pools: serial mode keeps every pool to the end, so that what the backend holds when each
// model ends grows by that model's pool, where the released run's stays at one pool and the data.
TEST_F(Run, KeepPoolsHoldsEveryModelsPoolToTheEnd) {
  const std::string three = sweep(three_reserving());
  for (const bool keep : {false, true}) {
    SCOPED_TRACE(keep ? "kept" : "released");
    const Result r = multifit("run " + three + " --backend cpu --mode serial --json " +
                              quoted(path("r.json")) + (keep ? " --keep-pools" : ""));
    ASSERT_EQ(r.rc, 0) << r.err;
    const json doc = result("r.json");
    EXPECT_EQ(doc["pools_kept"], keep);
    const json& models = doc["models"];
    ASSERT_EQ(models.size(), 3u);
    const size_t first = models[0]["memory"]["in_use_before_release_bytes"];
    for (size_t i = 0; i < models.size(); ++i) {
      const json& memory = models[i]["memory"];
      EXPECT_EQ(memory["reserved_bytes"], size_t(1) << 20);
      const size_t held = memory["in_use_before_release_bytes"];
      EXPECT_EQ(held, first + (keep ? i * memory["reserved_bytes"].get<size_t>() : 0));
      EXPECT_EQ(memory["in_use_after_release_bytes"].is_null(), keep);
      EXPECT_TRUE(
          contains(r.err, keep ? "kept m-s" + std::to_string(i + 1) + "'s pool (--keep-pools)"
                               : "released m-s" + std::to_string(i + 1)))
          << r.err;
    }
  }
  const Result streams =
      multifit("run " + three + " --backend cpu --quiet --mode streams --keep-pools");
  EXPECT_EQ(streams.rc, 0) << streams.err;
  EXPECT_TRUE(contains(streams.err, "--keep-pools has no effect without --mode serial"))
      << streams.err;
}

// --inject-fault: a real fault after the named model's first epoch. In processes mode it ends that
// model's worker alone; in streams mode on the CPU it ends the one process every model shares, and
// the journal keeps only the models that had ended.
TEST_F(Run, AnInjectedFaultTakesDownWhatSharesItsProcess) {
  const std::string three = sweep(three_reserving(30));
  const Result processes = multifit(
      "run " + three + " --backend cpu --quiet --mode processes --inject-fault m-s2 --json " +
      quoted(path("p.json")));
  EXPECT_EQ(processes.rc, 1) << processes.err;
  const json doc = result("p.json");
  EXPECT_EQ(doc["models"][0]["status"], "ok");
  EXPECT_EQ(doc["models"][1]["status"], "failed");
  EXPECT_TRUE(contains(doc["models"][1]["error"], "killed by signal 11 (SIGSEGV)"))
      << doc["models"][1]["error"];
  EXPECT_EQ(doc["models"][1]["epochs"].size(), 0u)
      << "its training's measurements died with its worker";
  // What it had built stands, as its worker said it at the start barrier.
  EXPECT_EQ(doc["models"][1]["memory"]["reserved_bytes"], size_t(1) << 20);
  EXPECT_GT(doc["models"][1]["data"]["bytes"].get<size_t>(), 0u);
  EXPECT_TRUE(doc["models"][1]["startup_s"].is_number());
  EXPECT_EQ(doc["models"][2]["status"], "ok");
  EXPECT_EQ(doc["injected_fault"], "m-s2");
  EXPECT_TRUE(
      contains(processes.err, "multifit: --inject-fault: m-s2 faults now, after its first epoch"))
      << processes.err;

  const Result streams = multifit(
      "run " + three + " --backend cpu --quiet --mode streams --inject-fault m-s2 --json " +
      quoted(path("s.json")));
  EXPECT_EQ(streams.rc, 128 + SIGSEGV) << streams.err;
  EXPECT_FALSE(fs::exists(path("s.json"))) << "the process that would write it is gone";

  const Result unknown = multifit("run " + three + " --backend cpu --inject-fault m-s9 --json " +
                                  quoted(path("u.json")));
  EXPECT_EQ(unknown.rc, 2);
  EXPECT_EQ(unknown.err, "multifit: error: --inject-fault m-s9: " + path("sweep.json") +
                             " has no model of that name; its models are m-s1, m-s2, m-s3\n");
  EXPECT_TRUE(contains(result("u.json")["error"], "--inject-fault m-s9"))
      << "the document is written";
  // Where the fault would end the runs that measure the others, and an empty name, are refused.
  for (const std::string refused : {"--mode all", "--mode auto", "--mode processes --solo"}) {
    const Result r = multifit("run " + three + " --backend cpu --inject-fault m-s2 " + refused);
    EXPECT_EQ(r.rc, 2) << refused;
    EXPECT_TRUE(contains(r.err, "give one --mode without --solo")) << r.err;
  }
  const Result empty = multifit("run " + three + " --backend cpu --inject-fault ''");
  EXPECT_EQ(empty.rc, 2);
  EXPECT_TRUE(contains(empty.err, "--inject-fault: the name of a model of the sweep, not empty"))
      << empty.err;
}

TEST_F(Run, AKilledWorkerLeavesTheOthersResults) {
  const std::string two = sweep(
      {{"models", {example_spec("binary-classifier.json", {{"name", "quick"}}), kSlowModel}}});
  // Once the slow model's worker has trained a moment, SIGKILL it.
  const Result r = in_background(
      "run " + two + " --backend cpu --quiet --mode processes --json " + quoted(path("r.json")),
      "for i in $(seq 100); do w=$(pgrep -f '[m]ultifit worker slow'); [ -n \"$w\" ] && break; "
      "sleep 0.05; done; "
      "sleep 0.5; kill -KILL $w");
  EXPECT_EQ(r.rc, 1) << r.err;
  const json doc = result("r.json");
  EXPECT_EQ(doc["models"][0]["status"], "ok");
  EXPECT_TRUE(doc["models"][0]["test_loss"].is_number());
  EXPECT_EQ(doc["models"][1]["status"], "failed");
  EXPECT_TRUE(contains(doc["models"][1]["error"], "killed by signal 9 (SIGKILL)"))
      << doc["models"][1]["error"];
}

// A worker stopped mid-training (SIGSTOP) takes no step: after --stall-timeout it is killed and its
// model failed as stalled, while the others finish with their numbers, long before the run would
// have waited for it (forever).
TEST_F(Run, AStalledWorkerIsEndedAndTheOthersFinish) {
  json models = {{"models", json::array()}};
  for (const char* name :
       {"m0", "m1", "m2"}) {  // each trains some 2 s, three on this machine's cores
    json model = kSlowModel;
    model["name"] = name;
    model["fit"]["epochs"] = 40;
    models["models"].push_back(model);
  }
  const auto start = std::chrono::steady_clock::now();
  const Result r = in_background(
      "run " + sweep(models) + " --backend cpu --quiet --mode processes --stall-timeout 2 --json " +
          quoted(path("r.json")),
      "for i in $(seq 100); do w=$(pgrep -f '[m]ultifit worker m1$'); [ -n \"$w\" ] && break; "
      "sleep 0.05; done; "
      "sleep 0.5; kill -STOP $w");
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.rc, 1) << r.err;
  const json doc = result("r.json");
  ASSERT_EQ(doc["models"].size(), 3u);
  for (const int i : {0, 2}) {
    EXPECT_EQ(doc["models"][i]["status"], "ok") << doc["models"][i]["error"];
    EXPECT_EQ(doc["models"][i]["epochs"].size(), 40u);
    EXPECT_TRUE(doc["models"][i]["test_loss"].is_number());
  }
  EXPECT_EQ(doc["models"][1]["status"], "failed");
  EXPECT_TRUE(contains(doc["models"][1]["error"], "stalled: no step for 2 s"))
      << doc["models"][1]["error"];
  EXPECT_LT(took, 30) << "the others' training and the timeout take seconds";
}

// Without --concurrency, processes mode starts no more workers at once than half the memory
// available holds, each as much as a probe worker measured (none is spawned where the workers' most
// fits): in phases, every model still trained.
// The memory is given (MULTIFIT_MEMORY_AVAILABLE) so that the bound is small here; an explicit
// --concurrency above it runs as asked, with a warning naming it.
TEST_F(Run, DefaultConcurrencyKeepsTheWorkersInHalfTheMemory) {
  const std::string tiny = quoted(example("tiny-sweep.json"));  // 32 models
  const Result r = multifit(
      "run " + tiny + " --backend cpu --quiet --mode processes --json " + quoted(path("r.json")),
      "MULTIFIT_MEMORY_AVAILABLE=200MiB ");
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = result("r.json");
  const int concurrency = doc["concurrency"];
  EXPECT_GE(concurrency, 2);
  EXPECT_LT(concurrency, 32);
  const std::string reason = doc["concurrency_reason"];
  EXPECT_TRUE(
      reason.starts_with("host memory: " + std::to_string(concurrency) + " workers of about "))
      << reason;
  EXPECT_TRUE(
      contains(reason, "fit in half of the 200.00 MiB available (MULTIFIT_MEMORY_AVAILABLE)"))
      << reason;
  EXPECT_TRUE(contains(
      r.err, "multifit: concurrency " + std::to_string(concurrency) + " (" + reason + ")\n"))
      << r.err;
  // the most any worker held: the phases together never held more than concurrency of them
  size_t peak = 0;
  for (const json& m : doc["models"]) {
    EXPECT_EQ(m["status"], "ok") << m["error"];
    peak = std::max(peak, m["memory"]["process_peak_rss_bytes"].get<size_t>());
  }
  EXPECT_LE(size_t(concurrency) * peak, size_t(100) << 20);

  const Result asked =
      multifit("run " + tiny + " --backend cpu --quiet --mode processes --concurrency 32 --json " +
                   quoted(path("a.json")),
               "MULTIFIT_MEMORY_AVAILABLE=200MiB ");
  ASSERT_EQ(asked.rc, 0) << asked.err;
  EXPECT_EQ(result("a.json")["concurrency"], 32);
  // The bound is measured again, by a probe worker of its own, so it may differ by one from the
  // first run's.
  const std::string bound =
      asked.err.substr(std::min(asked.err.size(), asked.err.find(" is above the ") + 14));
  EXPECT_TRUE(contains(asked.err, "multifit: warning: --concurrency 32 is above the "))
      << asked.err;
  EXPECT_NEAR(std::atoi(bound.c_str()), concurrency, 1) << asked.err;
  EXPECT_TRUE(contains(asked.err, " this machine can hold (host memory); running as asked\n"))
      << asked.err;
  // Where even each worker's most (its cap, its data, kWorkerBoundBytes) fits, no probe is spawned.
  const Result roomy = multifit(
      "run " + tiny + " --backend cpu --quiet --mode processes --json " + quoted(path("b.json")),
      "MULTIFIT_MEMORY_AVAILABLE=64GiB ");
  ASSERT_EQ(roomy.rc, 0) << roomy.err;
  EXPECT_EQ(result("b.json")["concurrency"], 32);
  const std::string unprobed = result("b.json")["concurrency_reason"];
  EXPECT_TRUE(unprobed.starts_with("all 32 models fit: host memory ")) << unprobed;
  EXPECT_TRUE(unprobed.ends_with(" (at most their caps: no probe needed)")) << unprobed;
  // Each worker holds two pipe ends in the parent: a low RLIMIT_NOFILE bounds them as well.
  const Result files = multifit(
      "run " + tiny + " --backend cpu --quiet --mode processes --json " + quoted(path("f.json")),
      "ulimit -n 90; ");
  ASSERT_EQ(files.rc, 0) << files.err;
  EXPECT_TRUE(result("f.json")["concurrency_reason"].get<std::string>().starts_with("open files: "))
      << result("f.json")["concurrency_reason"];
  EXPECT_LT(result("f.json")["concurrency"].get<int>(), 32);
}

TEST_F(Run, CtrlCStopsTheModelsAndWritesWhatWasMeasured) {
  json models = {{"models", {kSlowModel, kSlowModel, kSlowModel}}};
  models["models"][1]["name"] = "slow-2";
  models["models"][2]["name"] = "slow-3";
  for (const std::string mode :
       {"streams", "processes", "packed"}) {  // packed: the first two in one pack
    SCOPED_TRACE(mode);
    // Its stderr to a file of its own: in_background's redirection is of the `wait`.
    const Result r =
        in_background("run " + sweep(models) + " --backend cpu --quiet --concurrency 2 --mode " +
                          mode + " --json " + quoted(path("r.json")) + " 2>" + quoted(path("err")),
                      "sleep 1; kill -INT $p");
    EXPECT_EQ(r.rc, 130) << r.err;
    const json doc = result("r.json");
    ASSERT_EQ(doc["models"].size(), 3u);
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(doc["models"][i]["status"], "failed");
      EXPECT_TRUE(contains(doc["models"][i]["error"], "interrupted")) << doc["models"][i]["error"];
      EXPECT_GE(doc["models"][i]["epochs"].size(), 1u);  // what it measured before the stop
    }
    EXPECT_TRUE(contains(doc["models"][2]["error"], "not started")) << doc["models"][2]["error"];
    // And it says how to finish them.
    const std::string err = read_file(path("err"));
    EXPECT_TRUE(contains(
        err,
        "multifit: note: the run was interrupted with 3 models unfinished: the same command "
        "with --resume trains them, keeping what " +
            path("r.json.journal") + " recorded\n"))
        << err;
  }
}

// Host execution, like the cpu, has one device: --devices is recorded, says it has no effect, and
// every mode trains every model (serial and streams once asked host execution for device 1, which
// it lacks).
TEST_F(Run, DevicesHaveNoEffectOnHostExecutionInAnyMode) {
  const Result r = multifit(
      "run " + quoted(example("seed-pair.json")) + " --mode all --devices 0,1 --backend host-exec" +
      " --epochs 1 --data synthetic:binary:rows=128 --quiet --json " + quoted(path("r.json")));
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "--devices is recorded but has no effect on the host-exec backend"))
      << r.err;
  for (const json& run : result("r.json")["runs"])
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(run["models"][i]["status"], "ok")
          << run["mode"] << ": " << run["models"][i]["error"];
      EXPECT_EQ(run["models"][i]["device"], int(i)) << run["mode"];
    }
}

// On a terminal, live progress lines only when the terminal has a row for each model: the cursor
// cannot go up past the screen's top, and 2048 models redrawn on every epoch once wrote 724 MB to a
// 40-row terminal. Without a row for each, one live status line, redrawn in place. The terminal is
// script(1)'s, of the size stty gives it.
TEST_F(Run, LiveLinesOnlyWhenEveryModelHasARow) {
  for (const int rows : {40, 10}) {  // the tiny sweep has 32 models
    const std::string inner = "stty rows " + std::to_string(rows) + " cols 120; " +
                              quoted(MULTIFIT_BIN) + " run " + quoted(example("tiny-sweep.json")) +
                              " --backend cpu >/dev/null";
    const std::string command =
        "script -qec " + quoted(inner) + " " + quoted(path("tty")) + " >/dev/null </dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    const std::string screen = read_file(path("tty"));
    const bool redrawn = contains(screen, "\x1b[32A");  // up to the top of the 32 live lines
    EXPECT_EQ(redrawn, rows == 40) << rows << " rows";
    EXPECT_EQ(contains(screen, "tiny-lr0.03-s8  "), rows == 40) << rows << " rows";
    EXPECT_FALSE(contains(screen, "tiny-lr0.03-s8: Epoch 2/2")) << rows << " rows";
    EXPECT_EQ(contains(screen, "\x1b[1A\x1b[2Kmultifit: 32/32 models ended (32 ok) in "),
              rows == 10)
        << rows << " rows";
  }
}

// An error that every model of a sweep shares is one line on stderr, whatever the sweep's size;
// each model still has it in the document.
TEST_F(Run, AnErrorEveryModelSharesIsOneLine) {
  const Result r =
      multifit("run " + quoted(example("tiny-sweep.json")) + " --backend cpu --quiet --data " +
               quoted("csv:" + path("missing.csv")) + " --json " + quoted(path("r.json")));
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "multifit: error: 32 models (tiny-lr0.001-s1 and others): "))
      << r.err;
  const json doc = result("r.json");
  ASSERT_EQ(doc["models"].size(), 32u);
  for (const json& m : doc["models"])
    EXPECT_TRUE(contains(m["error"], "missing.csv")) << m["error"];
}

TEST_F(Run, BadInputIsOneLineAndExitCode2) {
  const std::string pair = quoted(example("seed-pair.json"));
  const std::string own = sweep({{"models", {example_spec("regressor.json")}}}, "own.json");
  for (const std::string& args :
       {"run " + pair + " --mode parallel", "run " + quoted(path("missing.json")),
        "run " + pair + " --devices -1",
        "run " + pair + " --json " + quoted(path("no/such/folder/r.json")),
        "run " + pair + " --memory-limit 12parsecs",
        "run " + sweep({{"base", example_spec("regressor.json")}, {"grid", {{"colour", {1}}}}}),
        "run " + own + " --json " + own,
        "run " + own + " --json " + quoted(path("x")) + " --csv " + quoted(path("x")),
        "run " + pair + " --backend cpu --gemm cublas", "run " + pair + " --graphs sometimes",
        "run " + pair + " --threads 0", "run " + pair + " --mode packed --pack-size -1"}) {
    SCOPED_TRACE(args);
    const Result r = multifit(args);
    EXPECT_EQ(r.rc, 2);
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_TRUE(r.err.starts_with("multifit: error: ")) << r.err;
  }
  // the sweep was not overwritten
  EXPECT_EQ(json::parse(read_file(path("own.json")))["models"].size(), 1u);
  // So does an option the backend cannot honour.
  const Result cublas =
      multifit("run " + pair + " --backend cpu --gemm cublas --json " + quoted(path("g.json")));
  EXPECT_EQ(cublas.rc, 2);
  EXPECT_TRUE(contains(result("g.json")["error"], "--gemm cublas")) << result("g.json");
  // A sweep that cannot be read still leaves the document asked for, saying why.
  const Result r =
      multifit("run " + quoted(path("missing.json")) + " --json " + quoted(path("r.json")));
  EXPECT_EQ(r.rc, 2);
  const json doc = result("r.json");
  EXPECT_TRUE(contains(doc["error"], "missing.json")) << doc;
  EXPECT_TRUE(doc["models"].empty());
  const Result devices = multifit("run " + pair + " --devices a");
  EXPECT_TRUE(contains(devices.err, "got a; expected a whole number from 0 to 1023"))
      << devices.err;
}

}  // namespace
