// NvmlMonitor (runtime/nvml_monitor.h): without NVML (no driver on this machine) it is unavailable, says
// why and summarizes nothing; with NVML it samples device 0. summarize() is checked on fake samples.
#include "runtime/nvml_monitor.h"

#include <gtest/gtest.h>

#include "runtime/error.h"
#include "runtime/shared_library.h"
#include "test_support.h"

namespace mf {
namespace {

using test::contains;

// Whether NVML can be loaded here; when not, `why` says why.
bool nvml_loadable(std::string& why) {
  try {
    SharedLibrary("libnvidia-ml.so.1", "the NVML tests");
    return true;
  } catch (const UserError& e) {
    why = e.what();
    return false;
  }
}

TEST(NvmlMonitor, SummarizesSamples) {
  const GpuSummary none = summarize({});
  EXPECT_EQ(none.samples, 0u);
  EXPECT_EQ(none.mean_utilization_percent, 0);
  EXPECT_EQ(none.max_utilization_percent, 0);
  EXPECT_EQ(none.peak_used_bytes, 0u);

  const GpuSummary summary = summarize({{0.0, 10, 100}, {0.05, 50, 300}, {0.1, 30, 200}});
  EXPECT_EQ(summary.samples, 3u);
  EXPECT_DOUBLE_EQ(summary.mean_utilization_percent, 30);
  EXPECT_DOUBLE_EQ(summary.max_utilization_percent, 50);
  EXPECT_EQ(summary.peak_used_bytes, 300u);
}

TEST(NvmlMonitor, WithoutNvmlIsUnavailableAndSaysWhy) {
  std::string why;
  if (nvml_loadable(why)) GTEST_SKIP() << "NVML loads on this machine";
  NvmlMonitor monitor(0);
  EXPECT_FALSE(monitor.available());
  EXPECT_TRUE(contains(monitor.why_not(), "NVML")) << monitor.why_not();
  EXPECT_TRUE(contains(monitor.why_not(), "libnvidia-ml.so.1")) << monitor.why_not();
  EXPECT_EQ(monitor.why_not().find('\n'), std::string::npos) << "one line";
  for (int call = 0; call < 2; ++call) {  // stop() may be called again, and the destructor after it
    const GpuSummary summary = monitor.stop();
    EXPECT_EQ(summary.samples, 0u);
    EXPECT_EQ(summary.device, "");
    EXPECT_EQ(summary.total_bytes, 0u);
    EXPECT_TRUE(summary.process_peak_bytes.empty());
  }
}

TEST(NvmlMonitor, WithNvmlSamplesDeviceZero) {
  std::string why;
  if (!nvml_loadable(why)) GTEST_SKIP() << why;
  NvmlMonitor monitor(0, 0.01);
  ASSERT_TRUE(monitor.available()) << monitor.why_not();
  const GpuSummary summary = monitor.stop();  // at least the sample the constructor takes
  EXPECT_GE(summary.samples, 1u);
  EXPECT_NE(summary.device, "");
  EXPECT_GT(summary.total_bytes, 0u);
  EXPECT_LE(summary.peak_used_bytes, summary.total_bytes);
  EXPECT_LE(summary.max_utilization_percent, 100);
  EXPECT_EQ(summary.sampling_error, "");

  // A device NVML does not have is unavailable, with NVML's reason.
  NvmlMonitor missing(1000);
  EXPECT_FALSE(missing.available());
  EXPECT_NE(missing.why_not(), "");
}

}  // namespace
}  // namespace mf
