// The run report's `gpu` and `gpu_note` from NVML's summaries (report_gpus, study/report/report.h):
// one GPU keeps the object it always had; several give an array, one entry per GPU of --devices, in
// order.
#include <gtest/gtest.h>

#include "runtime/nvml_monitor.h"
#include "study/report/report.h"

namespace mf {
namespace {

GpuSummary sampled(int cuda_device, const std::string& bus_id, const std::string& name,
                   double mean) {
  GpuSummary gpu;
  gpu.cuda_device = cuda_device;
  gpu.pci_bus_id = bus_id;
  gpu.device = name;
  gpu.samples = 4;
  gpu.mean_utilization_percent = mean;
  gpu.max_utilization_percent = mean + 5;
  gpu.peak_used_bytes = 1000;
  gpu.total_bytes = 8000;
  return gpu;
}

GpuSummary unsampled(int cuda_device, const std::string& why) {
  GpuSummary gpu;
  gpu.cuda_device = cuda_device;
  gpu.why_not = why;
  return gpu;
}

TEST(GpuReport, OneGpuIsOneObjectAsBefore) {
  RunReport run;
  report_gpus(run, {sampled(0, "00000000:17:00.0", "NVIDIA H200", 40)});
  const nlohmann::json expected = {
      {"device", "NVIDIA H200"},        {"samples", 4},
      {"mean_utilization_percent", 40}, {"max_utilization_percent", 45},
      {"peak_used_bytes", 1000},        {"total_bytes", 8000}};
  EXPECT_EQ(run.gpu, expected);
  EXPECT_EQ(run.gpu_note, "");

  GpuSummary lost = sampled(0, "00000000:17:00.0", "NVIDIA H200", 40);
  lost.sampling_error = "GPU is lost";
  report_gpus(run, {lost});
  EXPECT_EQ(run.gpu, expected);
  EXPECT_EQ(run.gpu_note, "GPU is lost");

  GpuSummary no_processes = sampled(0, "00000000:17:00.0", "NVIDIA H200", 40);
  no_processes.processes_error = "NVML gave no process's memory (Not Supported)";
  report_gpus(run, {no_processes});
  EXPECT_EQ(run.gpu, expected) << "utilization and memory kept";
  EXPECT_EQ(run.gpu_note, "NVML gave no process's memory (Not Supported)");

  report_gpus(run, {unsampled(0, "no NVML")});
  EXPECT_TRUE(run.gpu.is_null());
  EXPECT_EQ(run.gpu_note, "no NVML");
}

TEST(GpuReport, SeveralGpusAreAnArrayInTheirOrder) {
  RunReport run;
  GpuSummary lost = sampled(0, "00000000:65:00.0", "GPU on 65", 90);
  lost.sampling_error = "GPU is lost";
  report_gpus(run,
              {sampled(1, "00000000:17:00.0", "GPU on 17", 10), lost, unsampled(3, "Not Found")});
  ASSERT_TRUE(run.gpu.is_array());
  ASSERT_EQ(run.gpu.size(), 3u);
  EXPECT_EQ(run.gpu[0]["cuda_device"], 1);
  EXPECT_EQ(run.gpu[0]["pci_bus_id"], "00000000:17:00.0");
  EXPECT_EQ(run.gpu[0]["device"], "GPU on 17");
  EXPECT_EQ(run.gpu[0]["mean_utilization_percent"], 10);
  EXPECT_EQ(run.gpu[0]["samples"], 4);
  EXPECT_TRUE(run.gpu[0]["note"].is_null());
  EXPECT_EQ(run.gpu[1]["cuda_device"], 0);
  EXPECT_EQ(run.gpu[1]["mean_utilization_percent"], 90);
  EXPECT_EQ(run.gpu[1]["note"], "GPU is lost");
  EXPECT_EQ(run.gpu[2]["cuda_device"], 3);
  EXPECT_EQ(run.gpu[2]["samples"], 0);
  EXPECT_TRUE(run.gpu[2]["device"].is_null());
  EXPECT_TRUE(run.gpu[2]["pci_bus_id"].is_null());
  EXPECT_TRUE(run.gpu[2]["mean_utilization_percent"].is_null());
  EXPECT_EQ(run.gpu[2]["note"], "Not Found");
  for (const auto& entry : run.gpu)
    EXPECT_EQ(entry.size(), run.gpu[0].size()) << "every entry has every field";
  EXPECT_EQ(run.gpu_note, "cuda device 0: GPU is lost; cuda device 3: Not Found");
}

TEST(GpuReport, SeveralGpusNoneSampledIsNullWithWhy) {
  RunReport run;
  report_gpus(run, {unsampled(0, "no NVML"), unsampled(1, "no NVML")});
  EXPECT_TRUE(run.gpu.is_null());
  EXPECT_EQ(run.gpu_note, "no NVML");
}

TEST(GpuReport, AProcessDeviceBytesAreItsPeaksOverTheGpus) {
  RunReport run;
  run.models.resize(3);
  run.models[0].pid = 41;
  run.models[1].pid = 42;
  run.models[2].pid = 43;
  GpuSummary a = sampled(0, "00000000:17:00.0", "a", 1), b = sampled(1, "00000000:65:00.0", "b", 1);
  a.process_peak_bytes = {{41, 300}, {42, 100}};
  b.process_peak_bytes = {{42, 50}};
  report_gpus(run, {a, b});
  EXPECT_EQ(run.models[0].process_device_bytes, 300u);
  EXPECT_EQ(run.models[1].process_device_bytes, 150u);  // a process on both GPUs
  EXPECT_FALSE(run.models[2].process_device_bytes.has_value());
}

}  // namespace
}  // namespace mf
