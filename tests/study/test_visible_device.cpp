// A worker's CUDA_VISIBLE_DEVICES from its parent's (study/modes/processes/visible_device.h): the
// parent's list is the only GPUs there are to hand out, an empty one none.
#include <gtest/gtest.h>

#include "study/modes/processes/visible_device.h"

namespace mf {
namespace {

TEST(VisibleDevice, WithoutAListTheParentSeesEveryGpuByItsIndex) {
  EXPECT_EQ(visible_device(std::nullopt, 0), "0");
  EXPECT_EQ(visible_device(std::nullopt, 3), "3");
}

TEST(VisibleDevice, IsTheEntryOfTheParentsListAtTheDevicesPlace) {
  EXPECT_EQ(visible_device("4,6,7", 0), "4");
  EXPECT_EQ(visible_device("4,6,7", 2), "7");
  EXPECT_EQ(visible_device("GPU-8f2c1e,GPU-0a9d", 1), "GPU-0a9d");
}

TEST(VisibleDevice, AnEmptyListGivesNoGpu) {
  EXPECT_EQ(visible_device("", 0), "");
  EXPECT_EQ(visible_device("", 1), "");
}

TEST(VisibleDevice, ADeviceBeyondTheParentsListIsNoGpuRatherThanItsBareIndex) {
  EXPECT_EQ(visible_device("5", 1), "");
  EXPECT_EQ(visible_device("4,6", 2), "");
}

}  // namespace
}  // namespace mf
