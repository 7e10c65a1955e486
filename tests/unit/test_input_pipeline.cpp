// The host input pipeline (nn/input_pipeline.h): its batches are the same whatever the number of
// workers and the depth of the ring, and the training loop's input wait is what the ring hides or
// cannot hide. And a fit with preprocessing gives the same numbers on any pipeline.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_backend.h"
#include "data/dataset.h"
#include "nn/device_data.h"
#include "nn/fit.h"
#include "nn/input_pipeline.h"
#include "runtime/clock.h"
#include "tests/fit_numbers.h"
#include "tests/training_specs.h"
#include "tests/unit/pipeline_support.h"

namespace mf {
namespace {

using test::Data;
using test::host_work;
using test::random_rows;
using test::shuffled;

// 20 features read as a 4x5x1 image: a flip, a translation and noise, all drawn per sample.
ModelSpec augmented(uint64_t seed, PipelineSpec pipeline) {
  ModelSpec spec = test::classifier(seed, 0.01f);
  spec.input_shape = ImageShape{4, 5, 1};
  spec.preprocessing =
      Preprocessing::parse(nlohmann::json::parse(R"([{"type": "RandomFlip", "mode": "horizontal"},
                                {"type": "RandomTranslation", "height_factor": 0.25, "width_factor": 0.2},
                                {"type": "GaussianNoise", "stddev": 0.1}])"),
                           spec.input_shape, spec.input, "test");
  spec.pipeline = pipeline;
  return spec;
}

// Every batch of two epochs of a pack of two, through the ring.
std::vector<float> batches_through(const std::vector<ModelSpec>& specs, const Data& d) {
  std::vector<const ModelSpec*> members;
  for (const ModelSpec& s : specs) members.push_back(&s);
  CpuBackend host;
  InputPipeline pipeline(members, {d.x.data(), d.y.data(), specs[0].input, 1}, host);
  const int B = specs[0].fit.batch_size;
  const int64_t steps = (d.rows + B - 1) / B;
  std::vector<float> seen;
  for (int epoch = 0; epoch < 2; ++epoch) {
    pipeline.begin_epoch(epoch, {shuffled(d.rows, 10 + epoch), shuffled(d.rows, 20 + epoch)},
                         d.rows);
    for (int64_t step = 0; step < steps; ++step) {
      const int m = int(std::min<int64_t>(B, d.rows - step * B));
      const InputPipeline::Batch batch = pipeline.take(step);
      for (size_t z = 0; z < specs.size(); ++z) {
        const float* x = batch.x + z * size_t(B) * specs[0].input;
        const float* y = batch.y + z * size_t(B);
        seen.insert(seen.end(), x, x + size_t(m) * specs[0].input);
        seen.insert(seen.end(), y, y + m);
      }
      pipeline.release(step);
    }
  }
  return seen;
}

TEST(InputPipeline, BatchesAreTheSameForAnyWorkersAndPrefetch) {
  const Data d = random_rows(203, 20);  // 6 batches of 32 and one of 11
  auto pack = [](PipelineSpec p) {
    return std::vector<ModelSpec>{augmented(1, p), augmented(2, p)};
  };
  const std::vector<float> reference = batches_through(pack({1, 1}), d);
  ASSERT_EQ(reference.size(), size_t(2 * 2 * 203 * 21));
  for (PipelineSpec p :
       {PipelineSpec{4, 1}, PipelineSpec{1, 8}, PipelineSpec{4, 8}, PipelineSpec{3, 2}}) {
    SCOPED_TRACE(testing::Message() << p.workers << " workers, prefetch " << p.prefetch);
    EXPECT_EQ(batches_through(pack(p), d), reference);
  }
}

TEST(InputPipeline, ABatchIsItsRowsInOrderPreprocessedByItsMembersSeed) {
  const Data d = random_rows(40, 20);
  const ModelSpec spec = augmented(7, {2, 2});
  CpuBackend host;
  InputPipeline pipeline({&spec}, {d.x.data(), d.y.data(), 20, 1}, host);
  const std::vector<int> order = shuffled(d.rows, 5);
  pipeline.begin_epoch(3, {order}, d.rows);
  const InputPipeline::Batch batch = pipeline.take(1);  // rows 32..39 of the order: positions 32 on
  std::vector<float> want(8 * 20);
  for (int i = 0; i < 8; ++i)
    std::copy_n(d.x.data() + size_t(order[32 + size_t(i)]) * 20, 20, want.data() + i * 20);
  spec.preprocessing.apply(want.data(), want.data(), 8, 20, 7, 3, 32);
  // step 0 was never taken: take waits for step 1's own slot
  EXPECT_EQ(std::vector<float>(batch.x, batch.x + 8 * 20), want);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(batch.y[i], d.y[size_t(order[32 + size_t(i)])]);
}

// One epoch through the ring with a training step of `step_s` (a sleep): the pipeline's times.
InputPipeline::Times epoch_with_steps(const ModelSpec& spec, const Data& d, double step_s) {
  CpuBackend host;
  InputPipeline pipeline({&spec}, {d.x.data(), d.y.data(), 20, 1}, host);
  pipeline.begin_epoch(0, {shuffled(d.rows, 1)}, d.rows);
  const int64_t steps = (d.rows + 31) / 32;
  for (int64_t step = 0; step < steps; ++step) {
    pipeline.take(step);
    pipeline.release(step);
    std::this_thread::sleep_for(std::chrono::duration<double>(step_s));
  }
  return pipeline.take_times();
}

TEST(InputPipeline, AnInputBoundLoopWaitsAboutThePreparationTime) {
  const Data d = random_rows(32 * 20, 20);
  // 2 ms a batch to prepare, no step at all: the loop waits for nearly every batch's preparation
  const InputPipeline::Times t = epoch_with_steps(host_work(2000.0 / 32, {1, 1}), d, 0);
  EXPECT_GT(t.busy_s, 20 * 2e-3);
  EXPECT_GT(t.wait_s, 0.6 * t.busy_s) << "busy " << t.busy_s;
  EXPECT_LE(t.wait_s, 1.5 * t.busy_s) << "busy " << t.busy_s;
}

TEST(InputPipeline, APreparationFasterThanTheStepIsHidden) {
  const Data d = random_rows(32 * 20, 20);
  // 0.1 ms a batch to prepare, 5 ms a step, 8 slots: the ring has the next batch ready before it is
  // asked for, even when a busy machine holds the worker back for a few steps
  const InputPipeline::Times t = epoch_with_steps(host_work(100.0 / 32, {1, 8}), d, 5e-3);
  EXPECT_GT(t.busy_s, 20 * 0.1e-3);
  EXPECT_LT(t.wait_s, 0.1 * 20 * 5e-3) << "busy " << t.busy_s;
}

// A device whose uploads finish when the test says so: each fence's wait() blocks until complete().
class SlowUploads final : public test::UploadsOnlyDevice {
 public:
  struct Pending final : Fence {
    explicit Pending(SlowUploads& device) : device(device) {}
    void record() override {
      std::lock_guard lock(device.mutex);
      recorded = ++device.queued;
    }
    void wait() override {
      std::unique_lock lock(device.mutex);
      device.waits++;
      device.changed.notify_all();
      device.changed.wait(lock, [&] { return device.finished >= recorded; });
    }
    SlowUploads& device;
    int64_t recorded = 0;  // 0: never recorded, done
  };
  void complete() {  // every upload queued so far has finished
    std::lock_guard lock(mutex);
    finished = queued;
    changed.notify_all();
  }
  bool wait_for_waits(int n) {  // false after 5 s without
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(5), [&] { return waits >= n; });
  }
  std::unique_ptr<Fence> fence() override { return std::make_unique<Pending>(*this); }

  std::mutex mutex;
  std::condition_variable changed;
  int64_t queued = 0, finished = 0;
  int waits = 0;
};

// An upload queued from a slot may still read it after release(): the slot's next batch waits for
// the fence release() recorded, and only then overwrites it.
TEST(InputPipeline, ASlotIsNotRewrittenBeforeTheUploadThatReadsItHasFinished) {
  const Data d = random_rows(64, 20);
  const ModelSpec spec = host_work(1, {1, 1});  // one slot: step 1 goes where step 0 was
  SlowUploads device;
  InputPipeline pipeline({&spec}, {d.x.data(), d.y.data(), 20, 1}, device);
  const std::vector<int> order = shuffled(d.rows, 2);
  pipeline.begin_epoch(0, {order}, d.rows);
  const InputPipeline::Batch first = pipeline.take(0);
  const std::vector<float> step0(first.x, first.x + 32 * 20);
  pipeline.release(0);  // "the upload of step 0" is still reading the slot
  EXPECT_TRUE(device.wait_for_waits(2))
      << "the worker, at step 1, waits for it (its first wait was step 0's)";
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // time to do the wrong thing
  EXPECT_EQ(std::vector<float>(first.x, first.x + 32 * 20), step0)
      << "the slot was rewritten under the upload";
  device.complete();
  const InputPipeline::Batch second = pipeline.take(1);
  EXPECT_EQ(second.x, first.x);
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(second.x[size_t(i) * 20], d.x[size_t(order[32 + size_t(i)]) * 20])
        << "step 1's rows, row " << i;
  pipeline.release(1);
  device.complete();  // the destructor waits for the last upload
}

// A fit with preprocessing: the same losses and weights on any pipeline, and its times recorded.
TEST(InputPipeline, AFitGivesTheSameNumbersOnAnyPipeline) {
  const DataSplit split = make_synthetic("teacher:rows=330,features=20,classes=4,seed=2");
  CpuBackend cpu;
  DeviceData data(cpu, split.train);
  auto train = [&](PipelineSpec p, bool graphs, bool preprocessing = true) {
    ModelSpec spec = augmented(4, p);
    if (!preprocessing) spec.preprocessing = {};
    Model model(spec, cpu);
    FitOptions options;
    options.graphs = graphs;
    return test::fit_numbers(model, data, options, preprocessing);
  };
  const std::vector<double> reference = train({1, 1}, false);
  EXPECT_EQ(train({4, 8}, false), reference);
  EXPECT_EQ(train({2, 2}, true), reference)
      << "a recorded step replays the model's calls on the copied batch";
  EXPECT_NE(train({1, 1}, false, false), reference)
      << "the preprocessing changed what the model trained on";
}

TEST(InputPipeline, WithATimelineEachBatchPreparedIsASpanOfItsOwn) {
  const DataSplit split = make_synthetic("teacher:rows=330,features=20,classes=4,seed=2");
  CpuBackend cpu;
  DeviceData data(cpu, split.train);
  Model model(augmented(4, {2, 4}), cpu);
  FitOptions options;
  options.timeline = true;
  PackFit fit(model, data, options);
  fit.warm_up();  // prepares batches too, outside the epochs' spans
  while (!fit.done()) {
    fit.launch_epoch();
    fit.end_epoch();
  }
  const FitResult result = fit.take_results().front();
  ASSERT_EQ(result.steps.size(), size_t(2 * 8));  // 247 training rows: 8 steps an epoch
  ASSERT_EQ(result.input_spans.size(), size_t(2 * 8)) << "one per step, none of the warm-up's 4";
  for (const Interval& span : result.input_spans) EXPECT_LE(span.begin_s, span.end_s);
}

TEST(InputPipeline, WithoutPreprocessingTheResidentPathIsUsed) {
  const DataSplit split = make_synthetic("teacher:rows=330,features=20,classes=4,seed=2");
  CpuBackend cpu;
  DeviceData data(cpu, split.train);
  ModelSpec spec = test::classifier(4, 0.01f);
  spec.pipeline = {4, 8};  // not used: nothing to prepare
  Model model(spec, cpu);
  const FitResult result = fit(model, data, {});
  ASSERT_EQ(result.status, FitStatus::ok);
  for (const EpochMetrics& e : result.epochs) EXPECT_EQ(e.input_busy_s, 0);
}

}  // namespace
}  // namespace mf
