// A run made of parts (study/report/combine_parts.h): each whole-run figure by its rule, for ranks
// that trained side by side and for parts run apart and merged; and a run's description from its
// models (describe_models).
#include <gtest/gtest.h>

#include "study/report/combine_parts.h"

namespace mf {
namespace {

// A model of a part: its process, data set and device.
ModelReport model(size_t index, const std::string& host, int pid, const std::string& data,
                  size_t data_bytes, const std::string& device_name) {
  ModelReport m;
  m.index = index;
  m.name = "m";
  m.name += std::to_string(index);  // (not "m" + ...: GCC 12's -Wrestrict false positive)
  m.backend = "cpu";
  m.host = host;
  m.pid = pid;
  m.data = data;
  m.data_bytes = data_bytes;
  m.device_name = device_name;
  m.device_schedule = "spin";
  return m;
}

// Two parts with every figure, and a third that measured nothing (a journal's).
std::vector<PartFigures> three_parts() {
  PartFigures a;
  a.line = {0, "node-1", 10.0, 1.0, 50.0, 3};
  a.train_s = 8.0;
  a.samples = 400;
  a.concurrency = 2;
  a.concurrency_reason = "serial: one model at a time";
  a.training_threads = 4;
  a.host_peak_rss_bytes = 1000;
  a.workers_peak_rss_bytes = 300;
  a.resumed_models = 1;
  PartFigures b;
  b.line = {1, "node-2", 12.0, 2.0, 25.0, 2};
  b.train_s = 6.0;
  b.samples = 200;
  b.concurrency = 3;
  b.training_threads = 2;
  b.host_peak_rss_bytes = 3000;
  b.workers_peak_rss_bytes = 500;
  b.resumed_models = 2;
  PartFigures journal;
  journal.line = {2, "node-3", std::nullopt, std::nullopt, std::nullopt, 1};
  return {a, b, journal};
}

std::vector<ModelReport> models() {
  return {model(0, "node-1", 10, "synthetic:a", 100, "CPU A"),
          model(1, "node-2", 20, "synthetic:a", 100, "CPU B"),
          model(2, "node-2", 20, "synthetic:a", 100, "CPU B"),  // the same process's copy
          model(3, "node-2", 20, "synthetic:b", 50, "CPU B")};
}

TEST(CombineParts, RanksSideBySideAddUpWhatTheyDidAtOnce) {
  const RunReport run = combine_parts(PartsRan::together, three_parts(), models());
  EXPECT_EQ(run.wall_s, 12.0);                // max: the last rank to end
  EXPECT_EQ(run.startup_s, 2.0);              // max: the slowest rank to start
  EXPECT_EQ(run.train_s, 8.0);                // max: until the last rank's training ended
  EXPECT_EQ(run.samples_per_s, 600.0 / 8.0);  // every rank's rows over that time
  EXPECT_EQ(run.concurrency, 5);              // sum: at the same time
  EXPECT_EQ(run.training_threads, 6);
  EXPECT_EQ(run.host_peak_rss_bytes, 3000u);  // max: one process's peak
  EXPECT_EQ(run.workers_peak_rss_bytes, 800u);
  EXPECT_EQ(run.resumed_models, 3);
  EXPECT_EQ(run.concurrency_reason,
            "3 ranks, each training at most its own concurrency at once (rank 0: serial: one model "
            "at a time)");
  ASSERT_EQ(run.ranks.size(), 3u);
  EXPECT_EQ(run.ranks[1].host, "node-2");
  EXPECT_FALSE(run.ranks[2].wall_s);
  EXPECT_TRUE(run.shards.empty());
  EXPECT_EQ(run.models.size(), 4u);
}

TEST(CombineParts, PartsRunApartShareNoTimeOfTraining) {
  const RunReport run = combine_parts(PartsRan::apart, three_parts(), models());
  EXPECT_EQ(run.wall_s, 12.0);  // max: as long as the longest part
  EXPECT_FALSE(run.startup_s);  // no one process measured the whole
  EXPECT_FALSE(run.train_s);
  EXPECT_FALSE(run.samples_per_s);
  EXPECT_EQ(run.concurrency, 3);  // max: the most one part trained at once
  EXPECT_EQ(run.training_threads, 4);
  EXPECT_EQ(run.host_peak_rss_bytes, 3000u);
  EXPECT_EQ(run.workers_peak_rss_bytes, 800u);
  EXPECT_EQ(run.resumed_models, 3);
  EXPECT_EQ(run.concurrency_reason,
            "merged from 3 parts: the most that one part trained at once (each part's reason is in "
            "its document)");
  ASSERT_EQ(run.shards.size(), 3u);
  EXPECT_EQ(run.shards[0].wall_s, 10.0);
  EXPECT_TRUE(run.ranks.empty());
}

// Journals alone measured nothing: no figure is made up for them.
TEST(CombineParts, PartsThatMeasuredNothingMakeNoFigures) {
  for (const PartsRan how : {PartsRan::together, PartsRan::apart}) {
    const RunReport run = combine_parts(how, {three_parts()[2]}, {});
    EXPECT_EQ(run.wall_s, 0.0);
    EXPECT_EQ(run.concurrency, 0);
    EXPECT_FALSE(run.training_threads);
    EXPECT_FALSE(run.workers_peak_rss_bytes);
    EXPECT_FALSE(run.train_s);
    EXPECT_FALSE(run.startup_s);
  }
}

TEST(DescribeModels, EachDeviceAndDataSetOnceAndItsBytesOncePerProcess) {
  RunReport run;
  run.models = models();
  run.models.insert(run.models.begin(), ModelReport{});  // failed before a backend: says nothing
  describe_models(run);
  EXPECT_EQ(run.backend, "cpu");
  EXPECT_EQ(run.device_name, "CPU A; CPU B");
  EXPECT_EQ(run.device_schedule, "spin");
  EXPECT_EQ(run.data, "synthetic:a; synthetic:b");
  EXPECT_EQ(run.data_bytes, 250u);  // node-1:10's a, node-2:20's a and b
}

// A data source that is a prefix of another is a data set of its own.
TEST(DescribeModels, ADataSourceThatBeginsAnotherIsAnother) {
  RunReport run;
  run.models = {model(0, "h", 1, "synthetic:a:rows=64", 10, "C"),
                model(1, "h", 1, "synthetic:a", 20, "C")};
  describe_models(run);
  EXPECT_EQ(run.data, "synthetic:a:rows=64; synthetic:a");
  EXPECT_EQ(run.data_bytes, 30u);
}

}  // namespace
}  // namespace mf
