// write_trace (runtime/trace.h): the file is JSON in the Trace Event Format, one thread per model.
#include "runtime/trace.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace mf {
namespace {

using test::contains;
using test::user_error;
using TraceTest = test::TempDirTest;

// The events of `trace` whose "ph" is `phase` and whose "tid" is `tid`.
std::vector<nlohmann::json> events(const nlohmann::json& trace, const std::string& phase, int tid) {
  std::vector<nlohmann::json> found;
  for (const nlohmann::json& event : trace.at("traceEvents"))
    if (event.at("ph") == phase && event.at("tid") == tid) found.push_back(event);
  return found;
}

TEST_F(TraceTest, WritesThreadsEpochsAndStepsInMicroseconds) {
  const double origin_s = 1000;
  const std::vector<TraceTrack> tracks = {
      {"mlp_a", 11, {{1000.0, 1000.25}, {1000.25, 1000.5}}, {{1000.0, 1000.5}}},
      {"mlp_b", 12, {{1000.125, 1000.625}}, {{1000.125, 1000.625}}},
  };
  const std::string file = path("trace.json");
  write_trace(tracks, origin_s, file);
  // no temporary file beside it
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir()), {}), 1);

  const nlohmann::json trace = nlohmann::json::parse(std::ifstream(file));
  EXPECT_EQ(trace.at("displayTimeUnit"), "ms");
  ASSERT_EQ(trace.at("traceEvents").size(), 2u + 3u + 2u);

  for (int tid : {1, 2}) {
    SCOPED_TRACE("tid " + std::to_string(tid));
    const TraceTrack& track = tracks[tid - 1];
    const auto names = events(trace, "M", tid);
    ASSERT_EQ(names.size(), 1u);
    EXPECT_EQ(names[0].at("name"), "thread_name");
    EXPECT_EQ(names[0].at("args").at("name"), track.name);
    EXPECT_EQ(names[0].at("pid"), track.process);

    // The epochs first, then the steps, each in its track's order.
    const auto slices = events(trace, "X", tid);
    ASSERT_EQ(slices.size(), track.epochs.size() + track.steps.size());
    for (size_t i = 0; i < slices.size(); ++i) {
      const bool epoch = i < track.epochs.size();
      const Interval& interval = epoch ? track.epochs[i] : track.steps[i - track.epochs.size()];
      EXPECT_EQ(slices[i].at("name"), epoch ? "epoch " + std::to_string(i + 1) : "step");
      EXPECT_EQ(slices[i].at("pid"), track.process);
      EXPECT_NEAR(slices[i].at("ts").get<double>(), (interval.begin_s - origin_s) * 1e6, 1e-3);
      EXPECT_NEAR(slices[i].at("dur").get<double>(), (interval.end_s - interval.begin_s) * 1e6,
                  1e-3);
    }
  }
  // Spot checks by hand: mlp_b's step starts 125 ms after the origin and lasts 500 ms.
  const auto b = events(trace, "X", 2);
  EXPECT_DOUBLE_EQ(b[1].at("ts").get<double>(), 125000);
  EXPECT_DOUBLE_EQ(b[1].at("dur").get<double>(), 500000);
}

TEST_F(TraceTest, AnUnwritablePathIsASystemErrorNamingItAndWhy) {
  const std::string file = path("missing/trace.json");
  EXPECT_EQ(user_error<SystemError>([&] {
              write_trace({{"m", 1, {{0, 1}}, {}}}, 0, file);
            }),
            file + ": cannot write the trace file: No such file or directory");
}

}  // namespace
}  // namespace mf
