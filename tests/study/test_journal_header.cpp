// A journal's header (JournalHeader, study/sweep/journal.h) through its one JSON form and back,
// field by field; a header from before --shard and the scheduler; one of another version; and what
// is one. Journals end to end (resume, merge): tests/cli/test_sweeps.cpp, tests/cli/test_merge.cpp.
#include <gtest/gtest.h>

#include "study/sweep/journal.h"

namespace mf {
namespace {

using nlohmann::json;

// A field added to what a journal is of stops this compiling: add it to the round trip below.
[[maybe_unused]] void field_count_guard(JournalHeader& h, JournalRun& r) {
  [[maybe_unused]] auto& [h_version, h_run] = h;
  [[maybe_unused]] auto& [r_backend, r_mode, r_solo, r_sweep, r_shard, r_scheduler] = r;
}

JournalRun full_run() {
  SchedulerSpec scheduler;
  scheduler.type = SchedulerKind::asha;
  scheduler.metric = "val_loss";
  scheduler.grace_epochs = 2;
  scheduler.reduction_factor = 4;
  scheduler.max_epochs = 16;
  return {"cuda", "packed", true, {"tiny-sweep", 12, "0123456789abcdef"}, Shard{1, 3}, scheduler};
}

TEST(JournalHeader, WrittenAndReadBackFieldByField) {
  const json line = JournalHeader{kJournalVersion, full_run()};
  EXPECT_EQ(line["journal"], "multifit");
  EXPECT_TRUE(is_journal_header(line));
  const JournalHeader back = json::parse(line.dump()).get<JournalHeader>();
  EXPECT_EQ(back.version, kJournalVersion);
  const JournalRun& r = back.run;
  EXPECT_EQ(r.backend, "cuda");
  EXPECT_EQ(r.mode, "packed");
  EXPECT_TRUE(r.solo);
  EXPECT_EQ(r.sweep.name, "tiny-sweep");
  EXPECT_EQ(r.sweep.models, 12u);
  EXPECT_EQ(r.sweep.fingerprint, "0123456789abcdef");
  ASSERT_TRUE(r.shard);
  EXPECT_EQ(r.shard->index, 1u);
  EXPECT_EQ(r.shard->count, 3u);
  ASSERT_TRUE(r.scheduler);
  EXPECT_EQ(json(*r.scheduler), json(*full_run().scheduler));
  EXPECT_EQ(json(back), line) << "written again as it was";
}

TEST(JournalHeader, OneFromBeforeShardsAndTheSchedulerNamesNoSweep) {
  const JournalHeader h = json::parse(R"({"journal": "multifit", "version": 1, "models": 4,
      "backend": "cpu", "mode": "serial", "solo": false})")
                              .get<JournalHeader>();
  EXPECT_EQ(h.run.sweep.models, 4u);
  EXPECT_EQ(h.run.sweep.name, "");
  EXPECT_EQ(h.run.sweep.fingerprint, "");
  EXPECT_FALSE(h.run.shard);
  EXPECT_FALSE(h.run.scheduler);
}

// Another version's fields are that version's: read no further than its version, so that the
// reader can say which version it is.
TEST(JournalHeader, OneOfAnotherVersionIsReadNoFurtherThanItsVersion) {
  const JournalHeader h =
      json::parse(R"({"journal": "multifit", "version": 2, "whatever": 1})").get<JournalHeader>();
  EXPECT_EQ(h.version, 2);
  EXPECT_THROW(
      json::parse(R"({"journal": "multifit", "version": 1, "models": 4})").get<JournalHeader>(),
      json::exception);
  EXPECT_THROW(json::parse(R"({"journal": "multifit", "version": 1, "models": 4, "backend": "cpu",
      "mode": "serial", "solo": false, "shard": {"index": 3, "count": 3}})")
                   .get<JournalHeader>(),
               std::invalid_argument);
}

TEST(JournalHeader, OnlyAMultifitJournalsFirstLineIsOne) {
  EXPECT_TRUE(is_journal_header(json::parse(R"({"journal": "multifit", "version": 9})")));
  EXPECT_FALSE(is_journal_header(json::parse(R"({"journal": "other"})")));
  EXPECT_FALSE(is_journal_header(json::parse(R"({"journal": 1})")));
  EXPECT_FALSE(is_journal_header(json::parse(R"({"mode": "serial", "index": 0})")));
  EXPECT_FALSE(is_journal_header(json::parse("[1]")));
}

}  // namespace
}  // namespace mf
