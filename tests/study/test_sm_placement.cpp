// Where streams and packed mode put their groups (study/modes/sm_placement.h), in what needs no
// GPU: off the cuda backend a spec's "sms" changes nothing, without partitions asked no driver is
// asked, and a split that cannot be made is every group's one-line error, not the run's crash.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/device.h"
#include "runtime/error.h"
#include "study/modes/sm_placement.h"

namespace mf {
namespace {

// Three models, the second asking for 16 SMs of its own, on GPUs 0, 1 and 0.
std::vector<Job> three_jobs() {
  std::vector<Job> jobs(3);
  for (size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].index = i;
    jobs[i].name = std::to_string(i).insert(0, 1, 'm');  // GCC 12 misreads "m" + it (-Wrestrict)
    jobs[i].spec = ModelSpec{};
    jobs[i].device = int(i % 2);
  }
  return jobs;
}

const std::vector<std::vector<size_t>> kAlone = {{0}, {1}, {2}};

TEST(SmPlacement, OffTheCudaBackendEveryGroupRunsAsBefore) {
  std::vector<Job> jobs = three_jobs();
  jobs[1].spec->device_share.sms = 16;
  for (BackendKind kind : {BackendKind::cpu, BackendKind::host_exec}) {
    BackendOptions options;
    options.kind = kind;
    options.threads = 3;
    const SmPlacement placement = place_groups(jobs, kAlone, options, 2);
    for (size_t g = 0; g < kAlone.size(); ++g) {
      EXPECT_EQ(placement.partition(g), nullptr);
      EXPECT_EQ(placement.options(g).threads, 3);
      EXPECT_EQ(placement.options(g).device, 0) << "one device each";
      EXPECT_EQ(placement.sms(g), std::nullopt);
    }
  }
}

TEST(SmPlacement, WithoutPartitionsOrSmsEachGroupIsOnItsDeviceAndTheDriverIsNotAsked) {
  BackendOptions options;
  options.kind = BackendKind::cuda;
  const std::vector<Job> jobs = three_jobs();
  // packs {0, 2} on GPU 0 and {1} on GPU 1; no green context, so no driver call: this runs here
  const SmPlacement placement = place_groups(jobs, {{0, 2}, {1}}, options, 0);
  EXPECT_EQ(placement.options(0).device, 0);
  EXPECT_EQ(placement.options(1).device, 1);
  EXPECT_EQ(placement.partition(0), nullptr);
  EXPECT_EQ(placement.sms(1), std::nullopt);
}

TEST(SmPlacement, ASplitThatCannotBeMadeIsEachGroupsOneLineError) {
  if (!query_devices().devices.empty())
    GTEST_SKIP() << "a GPU is here: the split is made (gpu.GreenContexts.* test it)";
  BackendOptions options;
  options.kind = BackendKind::cuda;
  const std::vector<Job> jobs = three_jobs();
  const SmPlacement placement = place_groups(jobs, kAlone, options, 2);
  for (size_t g = 0; g < kAlone.size(); ++g) {
    try {
      placement.partition(g);
      ADD_FAILURE() << "group " << g << " was placed without a GPU";
    } catch (const UserError& e) {
      const std::string line = e.what();
      EXPECT_EQ(line.rfind("green contexts (--sm-partitions, a spec's \"device\" \"sms\")", 0), 0u)
          << line;
      EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    }
    EXPECT_EQ(placement.sms(g), std::nullopt);
  }
}

}  // namespace
}  // namespace mf
