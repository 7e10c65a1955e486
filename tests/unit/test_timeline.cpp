// measure_overlap (runtime/timeline.h) on hand-computed cases: busy time is the length of the union
// of all intervals, concurrent time the length of the parts covered by two or more tracks.
#include "runtime/timeline.h"

#include <gtest/gtest.h>

namespace mf {
namespace {

TEST(Timeline, NoTracksOrNoIntervalsIsNoTime) {
  for (const std::vector<Track>& tracks : {std::vector<Track>{}, std::vector<Track>{{}, {}}}) {
    const Overlap overlap = measure_overlap(tracks);
    EXPECT_EQ(overlap.busy_s, 0);
    EXPECT_EQ(overlap.concurrent_s, 0);
    EXPECT_EQ(overlap.fraction(), 0);
  }
}

TEST(Timeline, OneTrackIsBusyButNeverConcurrent) {
  const Overlap overlap = measure_overlap({{{0, 1}, {2, 3.5}}});
  EXPECT_DOUBLE_EQ(overlap.busy_s, 2.5);
  EXPECT_EQ(overlap.concurrent_s, 0);
  EXPECT_EQ(overlap.fraction(), 0);
}

TEST(Timeline, DisjointTracksAreNeverConcurrent) {
  const Overlap overlap = measure_overlap({{{0, 1}}, {{2, 4}}});
  EXPECT_DOUBLE_EQ(overlap.busy_s, 3);
  EXPECT_EQ(overlap.concurrent_s, 0);
}

TEST(Timeline, IdenticalTracksAreAlwaysConcurrent) {
  const Overlap overlap = measure_overlap({{{1, 3}, {4, 5}}, {{1, 3}, {4, 5}}});
  EXPECT_DOUBLE_EQ(overlap.busy_s, 3);
  EXPECT_DOUBLE_EQ(overlap.concurrent_s, 3);
  EXPECT_DOUBLE_EQ(overlap.fraction(), 1);
}

TEST(Timeline, PartialOverlap) {
  // Busy: [0,5) and [6,7) = 6 s. Concurrent: [3,4) = 1 s.
  const Overlap overlap = measure_overlap({{{0, 4}}, {{3, 5}, {6, 7}}});
  EXPECT_DOUBLE_EQ(overlap.busy_s, 6);
  EXPECT_DOUBLE_EQ(overlap.concurrent_s, 1);
  EXPECT_DOUBLE_EQ(overlap.fraction(), 1.0 / 6);
}

TEST(Timeline, ThreeTracksOfWhichTwoOverlap) {
  // Busy: [0,3) and [10,12) = 5 s. Concurrent: [1,2) = 1 s; the third track adds busy time only.
  const Overlap overlap = measure_overlap({{{0, 2}}, {{1, 3}}, {{10, 12}}});
  EXPECT_DOUBLE_EQ(overlap.busy_s, 5);
  EXPECT_DOUBLE_EQ(overlap.concurrent_s, 1);
}

TEST(Timeline, ThreeAtOnceIsConcurrentTimeCountedOnce) {
  const Overlap overlap = measure_overlap({{{0, 2}}, {{0, 2}}, {{1, 2}}});
  EXPECT_DOUBLE_EQ(overlap.busy_s, 2);
  EXPECT_DOUBLE_EQ(overlap.concurrent_s, 2);
}

TEST(Timeline, OverlappingIntervalsOfOneTrackCountOnce) {
  // Alone, the track is busy over [0,3) but never concurrent with itself; with another track over
  // [2.5,4) the concurrent time is [2.5,3).
  Overlap overlap = measure_overlap({{{0, 2}, {1, 3}}});
  EXPECT_DOUBLE_EQ(overlap.busy_s, 3);
  EXPECT_EQ(overlap.concurrent_s, 0);
  overlap = measure_overlap({{{0, 2}, {1, 3}}, {{2.5, 4}}});
  EXPECT_DOUBLE_EQ(overlap.busy_s, 4);
  EXPECT_DOUBLE_EQ(overlap.concurrent_s, 0.5);
}

TEST(Timeline, TouchingIntervals) {
  // Touching across tracks is not concurrent; within a track the touch point does not break the
  // track's time, so a track spanning it stays concurrent throughout [0.5,1.5).
  Overlap overlap = measure_overlap({{{0, 1}, {1, 2}}, {{2, 3}}});
  EXPECT_DOUBLE_EQ(overlap.busy_s, 3);
  EXPECT_EQ(overlap.concurrent_s, 0);
  overlap = measure_overlap({{{0, 1}, {1, 2}}, {{0.5, 1.5}}});
  EXPECT_DOUBLE_EQ(overlap.busy_s, 2);
  EXPECT_DOUBLE_EQ(overlap.concurrent_s, 1);
}

TEST(Timeline, EmptyAndReversedIntervalsHoldNoTime) {
  const Overlap overlap = measure_overlap({{{1, 1}, {3, 2}}, {{0, 4}}});
  EXPECT_DOUBLE_EQ(overlap.busy_s, 4);
  EXPECT_EQ(overlap.concurrent_s, 0);
}

}  // namespace
}  // namespace mf
