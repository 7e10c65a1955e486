// The plan of a GPU's SM partitions (runtime/sm_partitions.h) against hand-counted splits of an
// H200's 132 SMs into groups of 8 (16 groups, 128 SMs; the driver's figures on compute capability
// 9.x) and of a smaller GPU, and every refusal's line. No GPU: the plan is a pure function.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "runtime/error.h"
#include "runtime/sm_partitions.h"

namespace mf {
namespace {

using testing::ElementsAre;
using testing::Optional;

constexpr SmGroups kH200{132, 8, 16};

std::vector<SmRequest> models(std::vector<std::optional<int>> sms) {
  std::vector<SmRequest> requests;
  for (size_t i = 0; i < sms.size(); ++i) {
    std::string name = "m";  // m0, m1...
    name += std::to_string(i);
    requests.push_back({name, sms[i]});
  }
  return requests;
}

// The one line a plan that does not fit throws.
std::string refusal(const SmGroups& gpu, int partitions, std::vector<std::optional<int>> sms) {
  try {
    plan_sm_partitions(gpu, partitions, models(std::move(sms)));
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "the plan was accepted";
  return "";
}

TEST(SmGroups, AGroupIsTheMinimumRoundedUpToTheAlignment) {
  EXPECT_EQ(group_sms(8, 8), 8);  // compute capability 9.x
  EXPECT_EQ(group_sms(4, 2), 4);  // 8.x
  EXPECT_EQ(group_sms(3, 2), 4);
  EXPECT_EQ(group_sms(2, 8), 8);
  EXPECT_EQ(group_sms(0, 0), 1) << "a driver that gives no figure still makes groups of 1 SM";
}

TEST(SmPartitions, ModelsShareNEqualPartitionsRoundRobin) {
  // 16 groups in 3 partitions: 5 groups (40 SMs) each, one group left over
  const SmPlan plan = plan_sm_partitions(kH200, 3, models({{}, {}, {}, {}, {}}));
  EXPECT_THAT(plan.partition_groups, ElementsAre(5, 5, 5));
  EXPECT_THAT(plan.partition_of,
              ElementsAre(Optional(0), Optional(1), Optional(2), Optional(0), Optional(1)));
}

TEST(SmPartitions, OnePartitionIsEveryWholeGroup) {
  const SmPlan plan = plan_sm_partitions(kH200, 1, models({{}, {}}));
  EXPECT_THAT(plan.partition_groups, ElementsAre(16));  // 128 of the 132 SMs
  EXPECT_THAT(plan.partition_of, ElementsAre(Optional(0), Optional(0)));
}

TEST(SmPartitions, AsManyPartitionsAsGroupsAreOneGroupEach) {
  const SmPlan plan = plan_sm_partitions(kH200, 16, models({{}}));
  EXPECT_EQ(plan.partition_groups, std::vector<int>(16, 1));
  EXPECT_THAT(plan.partition_of, ElementsAre(Optional(0)));
}

TEST(SmPartitions, OwnSmsComeFirstRoundedUpAndTheRestShareWhatIsLeft) {
  // m1 asks 20 SMs: 3 groups (24 SMs); m3 asks 8: 1 group. The 12 groups left make 2 partitions
  // of 6 (48 SMs), numbered after the own ones; m0, m2, m4 are the shared ones' 0th, 1st, 2nd.
  const SmPlan plan = plan_sm_partitions(kH200, 2, models({{}, 20, {}, 8, {}}));
  EXPECT_THAT(plan.partition_groups, ElementsAre(3, 1, 6, 6));
  EXPECT_THAT(plan.partition_of,
              ElementsAre(Optional(2), Optional(0), Optional(3), Optional(1), Optional(2)));
}

TEST(SmPartitions, WithoutPartitionsOnlyOwnSmsAreSplitOff) {
  const SmPlan plan = plan_sm_partitions(kH200, 0, models({{}, 64, {}}));
  EXPECT_THAT(plan.partition_groups, ElementsAre(8));
  EXPECT_THAT(plan.partition_of, ElementsAre(std::nullopt, Optional(0), std::nullopt))
      << "a model without \"sms\" runs on the whole GPU";
  EXPECT_TRUE(plan_sm_partitions(kH200, 0, models({{}, {}})).partition_groups.empty());
}

TEST(SmPartitions, PartitionsNoModelSharesAreNotMade) {
  // every model has its own: --sm-partitions 4 would split nothing that anyone runs on
  const SmPlan plan = plan_sm_partitions(kH200, 4, models({120, 1}));
  EXPECT_THAT(plan.partition_groups, ElementsAre(15, 1)) << "no group is left for 4 partitions";
  EXPECT_THAT(plan.partition_of, ElementsAre(Optional(0), Optional(1)));
}

TEST(SmPartitions, TheWholeGpuForOneModelIsEveryGroup) {
  const SmPlan plan = plan_sm_partitions(kH200, 0, models({128}));
  EXPECT_THAT(plan.partition_groups, ElementsAre(16));
}

TEST(SmPartitions, MorePartitionsThanGroupsAreRefused) {
  EXPECT_EQ(refusal(kH200, 40, {{}}),
            "--sm-partitions 40: the GPU's 132 SMs make at most 16 partitions of 8 SMs (128 SMs in "
            "all)");
  EXPECT_EQ(refusal(kH200, 17, {{}}).substr(0, 20), "--sm-partitions 17: ");
  EXPECT_EQ(refusal({20, 4, 5}, 6, {{}}),
            "--sm-partitions 6: the GPU's 20 SMs make at most 5 partitions of 4 SMs (20 SMs in "
            "all)");
}

TEST(SmPartitions, ARequestOverTheGpuOrUnderOneSmIsRefused) {
  EXPECT_EQ(refusal(kH200, 0, {{}, 300}),
            "'m1': \"device\": {\"sms\": 300} is over the GPU's 132 SMs");
  EXPECT_EQ(refusal(kH200, 0, {0}), "'m0': \"device\": {\"sms\": 0}: give 1 SM or more");
  EXPECT_EQ(refusal(kH200, 0, {-8}), "'m0': \"device\": {\"sms\": -8}: give 1 SM or more");
}

TEST(SmPartitions, ARequestPastTheWholeGroupsIsRefused) {
  // 130 of 132 SMs exist, but whole groups of 8 hold 128
  EXPECT_EQ(refusal(kH200, 0, {130}),
            "'m0': \"device\": {\"sms\": 130}: a partition is whole groups of 8 SMs, and the GPU's "
            "132 SMs make at most 16 partitions of 8 SMs (128 SMs in all)");
}

TEST(SmPartitions, OwnRequestsOverTheGroupsTogetherAreRefused) {
  EXPECT_EQ(refusal(kH200, 0, {64, {}, 70}),
            "the models' own \"sms\" take 136 SMs ('m0' 64, 'm2' 72, each rounded up to whole "
            "groups of 8 SMs), and the GPU's 132 SMs make at most 16 partitions of 8 SMs (128 SMs "
            "in all)");
}

TEST(SmPartitions, PartitionsOverWhatOwnRequestsLeaveAreRefused) {
  // 96 SMs taken: 4 groups left for 5 partitions
  EXPECT_EQ(refusal(kH200, 5, {96, {}}),
            "--sm-partitions 5: the models' own \"sms\" take 96 SMs ('m0' 96), and the 32 SMs left "
            "make at most 4 partitions of 8 SMs");
  EXPECT_EQ(refusal(kH200, 1, {128, {}}).substr(0, 55),
            "--sm-partitions 1: the models' own \"sms\" take 128 SMs (");
  // the same requests fit with as many partitions as groups left
  EXPECT_THAT(plan_sm_partitions(kH200, 4, models({96, {}})).partition_groups,
              ElementsAre(12, 1, 1, 1, 1));
}

}  // namespace
}  // namespace mf
