// The outputs of a command (--json, --csv, --trace, train's --save) when they cannot be written: on
// a full file system each failure is one line with the OS's reason, exit 1, no temporary file left
// and the other outputs written in full; a device, a FIFO or a socket is refused before anything
// runs; and
// `-` is standard output, which the document then has to itself.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace {

using namespace cli_test;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) found.push_back(line);
  return found;
}

size_t fields(const std::string& csv_line) {
  return std::count(csv_line.begin(), csv_line.end(), ',') + 1;
}

// binary-classifier.json on the CPU, without epoch lines: a model that trains in milliseconds.
const std::string kBinary = quoted(example("binary-classifier.json")) + " --backend cpu --quiet";

// The folder full/ of each test is a file system with no byte left: a tmpfs of 8 KiB, filled,
// mounted in a private mount namespace that lives as long as the command (as root `unshare -m`, as
// a user `unshare -rm`); ok/ is an ordinary folder. Skipped where no such namespace can be had.
class FullDisk : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    fs::create_directories(path("full"));
    fs::create_directories(path("ok"));
    for (const char* way : {"unshare -m", "unshare -rm"}) {
      const std::string probe = std::string(way) + " sh -c " +
                                quoted("mount -t tmpfs -o size=8k tmpfs " + full("")) +
                                " >/dev/null 2>&1";
      if (std::system(probe.c_str()) == 0) {
        unshare_ = way;
        return;
      }
    }
    GTEST_SKIP() << "no private mount namespace for a tmpfs here (neither unshare -m nor unshare "
                    "-rm can mount one)";
  }

  std::string full(const std::string& name) const { return path("full/" + name); }
  std::string ok(const std::string& name) const { return path("ok/" + name); }

  // `multifit ARGS` with full/ full; listing() is what full/ held afterwards, in the namespace.
  Result multifit_on_a_full_disk(const std::string& args) const {
    const std::string script = "mount -t tmpfs -o size=8k tmpfs " + quoted(full("")) +
                               " || exit 99; head -c 8192 " + "/dev/zero >" + quoted(full("fill")) +
                               " 2>/dev/null; \"$0\" \"$@\"; rc=$?; ls -A " + quoted(full("")) +
                               " >" + quoted(path("listing")) + "; exit $rc";
    return multifit(args, unshare_ + " sh -c " + quoted(script) + " ");
  }
  std::string listing() const { return read_file(path("listing")); }

  std::string unshare_;
};

TEST_F(FullDisk, AnOutputThatCannotBeWrittenSaysWhyAndTheOthersAreWritten) {
  const Result r =
      multifit_on_a_full_disk("train " + kBinary + " --json " + quoted(full("r.json")) + " --csv " +
                              quoted(ok("r.csv")) + " --trace " + quoted(full("t.json")));
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(r.err, "multifit: error: " + full("r.json") +
                       ": cannot write the result file: No space left on device\n"
                       "multifit: error: " +
                       full("t.json") + ": cannot write the trace file: No space left on device\n");
  EXPECT_EQ(listing(), "fill\n");  // no temporary file left behind
  // trained: the outputs failed after
  EXPECT_TRUE(contains(r.out, "binary-classifier: test_loss")) << r.out;
  // The CSV in full: its header and the model's row, as a run with room writes them.
  ASSERT_EQ(multifit("train " + kBinary + " --csv " + quoted(ok("room.csv"))).rc, 0);
  const std::vector<std::string> csv = lines(read_file(ok("r.csv"))),
                                 room = lines(read_file(ok("room.csv")));
  ASSERT_EQ(csv.size(), 2u);
  EXPECT_EQ(csv[0], room[0]);
  EXPECT_EQ(fields(csv[1]), fields(room[0]));
  EXPECT_TRUE(contains(csv[1], ",binary-classifier,ok,")) << csv[1];
}

// run writes its outputs the same way: the CSV fails, the document of every model is written.
TEST_F(FullDisk, ARunWritesTheDocumentWhenTheCsvCannotBe) {
  const Result r = multifit_on_a_full_disk(
      "run " + quoted(example("tiny-sweep.json")) + " --backend cpu --quiet" + " --json " +
      quoted(ok("r.json")) + " --csv " + quoted(full("r.csv")));
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(r.err, "multifit: error: " + full("r.csv") +
                       ": cannot write the CSV file: No space left on device\n");
  EXPECT_EQ(listing(), "fill\n");
  EXPECT_EQ(result("ok/r.json")["models"].size(), 32u);
}

// A journal that cannot be written is said, and the run goes on without it: every model trains and
// the document is written; no journal without its header is left.
TEST_F(FullDisk, AJournalThatCannotBeWrittenLeavesTheRunToFinish) {
  const Result r = multifit_on_a_full_disk(
      "run " + quoted(example("tiny-sweep.json")) + " --backend cpu --quiet" + " --json " +
      quoted(ok("r.json")) + " --journal " + quoted(full("r.journal")));
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(r.err, "multifit: error: " + full("r.journal") +
                       ": cannot write the journal: No space left on device; the run goes on "
                       "without a journal\n");
  EXPECT_EQ(listing(), "fill\n");
  const json doc = result("ok/r.json");
  ASSERT_EQ(doc["models"].size(), 32u);
  for (const json& m : doc["models"]) EXPECT_EQ(m["status"], "ok");
}

// Weights that cannot be saved fail the model (exit 1), and the document, written elsewhere, says
// why.
TEST_F(FullDisk, AFailedWeightsSaveFailsTheModelAndTheDocumentSaysWhy) {
  const Result r = multifit_on_a_full_disk("train " + kBinary + " --save " + quoted(full("w")) +
                                           " --json " + quoted(ok("r.json")));
  const std::string why =
      "--save " + full("w") + ": cannot write the weights file: No space left on device";
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(r.err, "multifit: error: " + why + "\n");
  EXPECT_EQ(listing(), "fill\n");
  const json model = result("ok/r.json")["models"][0];
  EXPECT_EQ(model["status"], "failed");
  EXPECT_EQ(model["error"], why);
}

// A device or a FIFO as an output is refused before anything trains, and is left as it was (the
// rename of a temporary file would have replaced it with a regular file). The device is a node of
// /dev/full's numbers made in the test's folder (where root may make one), never /dev/full itself,
// which a regression would replace.
TEST_F(Cli, ASpecialFileAsAnOutputIsRefusedBeforeTraining) {
  ASSERT_EQ(mkfifo(path("fifo").c_str(), 0600), 0);
  struct Case {
    std::string file, kind;
  };
  std::vector<Case> cases = {{path("fifo"), "a FIFO"}};
  if (mknod(path("full").c_str(), S_IFCHR | 0600, makedev(1, 7)) == 0)
    cases.push_back({path("full"), "a character device"});
  for (const Case& c : cases)
    for (const std::string flag : {"--json", "--csv", "--trace"}) {
      const Result r = multifit("train " + kBinary + " " + flag + " " + quoted(c.file));
      EXPECT_EQ(r.rc, 2) << flag << " " << c.file;
      EXPECT_EQ(r.err, "multifit: error: " + flag + " " + c.file + ": is " + c.kind +
                           ", not a regular file; give a file name, or - for standard output\n");
      EXPECT_EQ(r.out, "");  // nothing ran
    }
  // The journal is read back by --resume: a file, never standard output, so - is not offered.
  const Result journal = multifit("run " + quoted(example("tiny-sweep.json")) +
                                  " --backend cpu --journal " + quoted(path("fifo")));
  EXPECT_EQ(journal.rc, 2);
  EXPECT_EQ(journal.err, "multifit: error: --journal " + path("fifo") +
                             ": is a FIFO, not a regular file; give a file name\n");
  // --save is checked when the model starts: it fails before training, and the document says so.
  const Result save =
      multifit("train " + quoted(example("binary-classifier.json")) + " --backend cpu --save " +
               quoted(path("fifo")) + " --json " + quoted(path("r.json")));
  EXPECT_EQ(save.rc, 2);
  EXPECT_EQ(save.err_lines(), 1) << save.err;
  EXPECT_TRUE(contains(save.err, "--save " + path("fifo") + ": is a FIFO, not a regular file"))
      << save.err;
  EXPECT_FALSE(contains(save.err, "Epoch")) << save.err;
  EXPECT_EQ(result("r.json")["models"][0]["status"], "failed");
  for (const Case& c : cases) EXPECT_FALSE(fs::is_regular_file(c.file)) << c.file;
}

// --json - writes the document to standard output, and the line train prints there goes to stderr.
TEST_F(Cli, DashWritesTheDocumentToStandardOutput) {
  const Result r =
      multifit("train " + quoted(example("binary-classifier.json")) + " --backend cpu --json -");
  ASSERT_EQ(r.rc, 0) << r.err;
  const json document = json::parse(r.out);  // all of stdout: nothing else was written there
  EXPECT_EQ(document["models"][0]["status"], "ok");
  EXPECT_TRUE(contains(r.err, "Epoch 2/2")) << r.err;
  EXPECT_TRUE(contains(r.err, "binary-classifier: test_loss")) << r.err;
  // run's tables go to stderr too; --csv - is the CSV alone on stdout.
  const Result run =
      multifit("run " + quoted(example("tiny-sweep.json")) + " --backend cpu --quiet --csv -");
  ASSERT_EQ(run.rc, 0) << run.err;
  const std::vector<std::string> csv = lines(run.out);
  ASSERT_EQ(csv.size(), 33u);  // the header and a row per model
  EXPECT_TRUE(csv[0].starts_with("run_mode,")) << csv[0];
  EXPECT_TRUE(contains(run.err, "serial: 32 models")) << run.err;
}

// At most one output may be standard output.
TEST_F(Cli, AtMostOneOutputIsStandardOutput) {
  const Result r = multifit("train " + kBinary + " --json - --csv -");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err,
            "multifit: error: --csv -: --json writes to standard output already; at most one "
            "output may be -\n");
  const Result save = multifit("train " + kBinary + " --trace - --save -");
  EXPECT_EQ(save.rc, 2);
  EXPECT_TRUE(contains(save.err, "--save -: --trace writes to standard output already"))
      << save.err;
}

// A standard output that cannot be written fails like a file, and the other outputs are still
// written.
TEST_F(Cli, AStandardOutputThatCannotBeWrittenSaysWhy) {
  if (!fs::is_character_file("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  const Result r = multifit("train " + kBinary + " --json - --csv " + quoted(path("r.csv")),
                            "sh -c '\"$0\" \"$@\" >/dev/full' ");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(
      lines(r.err).back(),
      "multifit: error: standard output: cannot write the result file: No space left on device");
  EXPECT_EQ(lines(read_file(path("r.csv"))).size(), 2u);
}

}  // namespace
