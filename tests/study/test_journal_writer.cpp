// The journal's writer thread (study/sweep/journal.h): lines queued from several training threads
// at once are all written, each thread's in the order it queued them; error() waits for them;
// --mode auto's choice comes after the models queued before it; and the destructor writes what is
// still queued. Journals end to end (resume, a full disk): tests/cli/test_sweeps.cpp,
// tests/cli/test_outputs.cpp.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <thread>
#include <vector>

#include "runtime/error.h"
#include "study/sweep/journal.h"

namespace mf {
namespace {

using nlohmann::json;

constexpr int kThreads = 4, kModelsEach = 50;

JournalRun tiny_run() { return {"cpu", "packed", false, {"tiny-sweep", 200, ""}, {}, {}}; }

// "m" and the index (appended: GCC 12 warns, wrongly, of "m" + std::to_string(...))
std::string name_of(size_t index) {
  std::string name = "m";
  return name += std::to_string(index);
}

Job job_at(size_t index) {
  Job job;
  job.index = index;
  job.name = name_of(index);
  return job;
}

// Thread t records models t, t + kThreads, t + 2 kThreads... in that order.
void record_from_threads(Journal& journal) {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&journal, t] {
      for (int i = 0; i < kModelsEach; ++i) {
        ModelReport report;
        report.samples = i;
        journal.ended("packed", job_at(size_t(t + i * kThreads)), report, 0);
      }
    });
  for (std::thread& thread : threads) thread.join();
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Each thread's models in the order the journal holds them, by thread.
std::map<int, std::vector<size_t>> by_thread(const JournalLines& lines) {
  std::map<int, std::vector<size_t>> order;
  for (const JournalModelLine& line : lines.models)
    order[int(line.index % kThreads)].push_back(line.index);
  return order;
}

// A fresh folder per test, removed after it.
class JournalWriter : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("mf-journal-" + std::to_string(getpid()) + "-" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    ASSERT_TRUE(std::filesystem::create_directories(dir_));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

TEST_F(JournalWriter, EveryThreadsLinesAreWrittenInTheirOrderBeforeErrorReturns) {
  Journal journal(path("run.journal"), tiny_run(), nullptr);
  record_from_threads(journal);
  journal.auto_choice(json{{"mode", "packed"}});
  EXPECT_EQ(journal.error(), "");
  // read while the journal is still open: error() returned once every queued line was written
  const JournalLines lines = parse_journal(path("run.journal"), read_all(path("run.journal")));
  ASSERT_EQ(lines.models.size(), size_t(kThreads * kModelsEach));
  for (const auto& [thread, indices] : by_thread(lines)) {
    ASSERT_EQ(indices.size(), size_t(kModelsEach)) << "thread " << thread;
    for (int i = 0; i < kModelsEach; ++i)
      EXPECT_EQ(indices[size_t(i)], size_t(thread + i * kThreads)) << "thread " << thread;
  }
  for (const JournalModelLine& line : lines.models) {
    EXPECT_EQ(line.name, name_of(line.index));
    EXPECT_EQ(line.ended.report.samples, int64_t(line.index / kThreads));
  }
  EXPECT_EQ(lines.auto_choice, json({{"mode", "packed"}}));
  // the choice, queued after every model, is the last line
  const std::string text = read_all(path("run.journal"));
  const size_t last = text.rfind('\n', text.size() - 2);
  EXPECT_EQ(json::parse(text.substr(last + 1)), json({{"auto", {{"mode", "packed"}}}}));
}

TEST_F(JournalWriter, TheDestructorWritesWhatIsStillQueued) {
  {
    Journal journal(path("run.journal"), tiny_run(), nullptr);
    record_from_threads(journal);
  }
  const JournalLines lines = parse_journal(path("run.journal"), read_all(path("run.journal")));
  EXPECT_EQ(lines.models.size(), size_t(kThreads * kModelsEach));
  EXPECT_EQ(lines.cut_line, 0u);
}

TEST_F(JournalWriter, AnInterruptedModelIsNotRecorded) {
  Journal journal(path("run.journal"), tiny_run(), nullptr);
  journal.ended("packed", job_at(0), ModelReport{}, kExitInterrupted);
  journal.ended("packed", job_at(1), ModelReport{}, 0);
  EXPECT_EQ(journal.error(), "");
  const JournalLines lines = parse_journal(path("run.journal"), read_all(path("run.journal")));
  ASSERT_EQ(lines.models.size(), 1u);
  EXPECT_EQ(lines.models[0].index, 1u);
}

}  // namespace
}  // namespace mf
