// The input pipeline's errors (nn/input_pipeline.h): what a worker meets preparing a batch (an
// upload's error, as a poisoned CUDA context gives it; the preprocessing's) reaches the training
// loop, rethrown with its type and message, at its next batch; every worker stops, nothing waits
// forever, and the pipeline is then destroyed without an error, even while every fence throws.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "nn/input_pipeline.h"
#include "tests/unit/pipeline_support.h"

namespace mf {
namespace {

using test::Data;
using test::host_work;
using test::random_rows;
using test::shuffled;

// What the fake device throws, as the cuda backend throws CudaError: a type of its own.
struct DeviceFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A device whose uploads fail where the test says. The pipeline makes one fence a slot, in slot
// order, and step s waits for slot s % prefetch's fence, the slot's waits in step order: so the
// preparation of `failing_step` (none when -1) is the wait number failing_step / prefetch + 1 of
// fence failing_step % prefetch, which alone throws. After poison(), every wait throws, the
// destructor's too: a context's sticky error.
class FailingUploads final : public test::UploadsOnlyDevice {
 public:
  FailingUploads(int prefetch, int64_t failing_step)
      : failing_fence_(failing_step < 0 ? -1 : int(failing_step % prefetch)),
        failing_wait_(failing_step < 0 ? -1 : failing_step / prefetch + 1) {}

  static std::string message(int fence, int64_t wait) {
    return "an illegal memory access was encountered (fence " + std::to_string(fence) + ", wait " +
           std::to_string(wait) + ")";
  }
  static constexpr const char* kSticky = "an illegal memory access was encountered (sticky)";

  std::unique_ptr<Fence> fence() override { return std::make_unique<Failing>(*this, fences_++); }
  void poison() {
    std::lock_guard lock(mutex_);
    poisoned_ = true;
  }
  int64_t waits() {  // so far, on every fence
    std::lock_guard lock(mutex_);
    return waits_;
  }

 private:
  struct Failing final : Fence {
    Failing(FailingUploads& device, int index) : device(device), index(index) {}
    void wait() override { device.waited(index, waits); }
    FailingUploads& device;
    const int index;
    int64_t waits = 0;  // counted under the device's mutex
  };
  void waited(int fence, int64_t& fence_waits) {
    std::lock_guard lock(mutex_);
    ++waits_;
    ++fence_waits;
    if (poisoned_) throw DeviceFault(kSticky);
    if (fence == failing_fence_ && fence_waits == failing_wait_)
      throw DeviceFault(message(fence, fence_waits));
  }

  const int failing_fence_;
  const int64_t failing_wait_;
  int fences_ = 0;  // made so far (by the pipeline's constructor, on one thread)
  std::mutex mutex_;
  bool poisoned_ = false;
  int64_t waits_ = 0;
};

// Runs `body` on a thread of its own and rethrows what it threw. A body still running after 20 s
// hangs: nothing can stop it, so the test process ends, saying so.
void ends_in_time(const std::function<void()>& body) {
  std::packaged_task<void()> task(body);
  std::future<void> done = task.get_future();
  std::thread(std::move(task)).detach();
  if (done.wait_for(std::chrono::seconds(20)) == std::future_status::timeout) {
    std::fprintf(stderr, "the input pipeline hangs: still running after 20 s\n");
    std::abort();
  }
  done.get();
}

struct Thrown {
  int64_t step = -1;  // the take that threw; -1: none did
  std::string what;
};
// Takes and releases the epoch's steps in order, from `from` on, until a take throws E: where, and
// its message. Each batch taken before then holds its rows of `order`.
template <class E>
Thrown take_until_thrown(InputPipeline& pipeline, const Data& d, const std::vector<int>& order,
                         int batch_size, int features, int64_t from = 0) {
  const int64_t steps = (d.rows + batch_size - 1) / batch_size;
  for (int64_t step = from; step < steps; ++step) {
    InputPipeline::Batch batch{};
    try {
      batch = pipeline.take(step);
    } catch (const E& e) {
      return {step, e.what()};
    }
    const int64_t first = step * batch_size;
    for (int64_t i = 0; i < std::min<int64_t>(batch_size, d.rows - first); ++i) {
      const size_t row = size_t(order[size_t(first + i)]);
      EXPECT_EQ(batch.x[i * features], d.x[row * size_t(features)]) << "step " << step;
      EXPECT_EQ(batch.y[i], d.y[row]) << "step " << step;
    }
    pipeline.release(step);
  }
  return {};
}

// One worker of several meets an upload error, at the first batch, mid-epoch or at the last: the
// loop gets that error, no later than at that batch, and the pipeline goes without hanging.
TEST(InputPipelineFaults, AnUploadErrorInOneWorkerReachesTheLoopWithItsMessage) {
  const Data d = random_rows(203, 20);  // 7 steps: 6 batches of 32 and one of 11
  const std::vector<int> order = shuffled(d.rows, 4);
  for (const PipelineSpec p :
       {PipelineSpec{1, 1}, PipelineSpec{3, 4}, PipelineSpec{4, 2}, PipelineSpec{2, 8}}) {
    for (const int64_t failing : {0, 3, 6}) {
      SCOPED_TRACE(testing::Message() << p.workers << " workers, prefetch " << p.prefetch
                                      << ", the preparation of step " << failing << " fails");
      const ModelSpec spec = host_work(2, p);
      FailingUploads device(p.prefetch, failing);
      const std::string want =
          FailingUploads::message(int(failing % p.prefetch), failing / p.prefetch + 1);
      ends_in_time([&] {
        auto pipeline = std::make_unique<InputPipeline>(
            std::vector<const ModelSpec*>{&spec},
            InputPipeline::Rows{d.x.data(), d.y.data(), 20, 1}, device);
        pipeline->begin_epoch(0, {order}, d.rows);
        const Thrown thrown =
            take_until_thrown<DeviceFault>(*pipeline, d, order, spec.fit.batch_size, 20);
        EXPECT_NE(thrown.step, -1) << "no take threw";
        EXPECT_LE(thrown.step, failing) << "a step after the one no worker prepared was taken";
        if (p.prefetch == 1) {
          EXPECT_EQ(thrown.step, failing) << "one slot: the steps in turn";
        }
        EXPECT_EQ(thrown.what, want);
        try {
          pipeline->begin_epoch(1, {order}, d.rows);
          ADD_FAILURE() << "a pipeline whose worker failed started an epoch";
        } catch (const DeviceFault& e) {
          EXPECT_EQ(std::string(e.what()), want) << "the same error, again";
        }
        EXPECT_NO_THROW(pipeline.reset());
      });
    }
  }
}

// Once a worker has failed, no worker starts another batch: at most each other worker's batch in
// preparation is still waited for. The ring is deep enough for the whole epoch and a batch costs
// about 10 ms, so workers that went on would prepare the epoch's other 18 batches meanwhile.
TEST(InputPipelineFaults, EveryWorkerStopsAtTheFirstError) {
  const Data d = random_rows(20 * 32, 20);
  const ModelSpec spec = host_work(300, {2, 20});
  FailingUploads device(20, 1);
  ends_in_time([&] {
    InputPipeline pipeline({&spec}, {d.x.data(), d.y.data(), 20, 1}, device);
    const std::vector<int> order = shuffled(d.rows, 5);
    pipeline.begin_epoch(0, {order}, d.rows);
    const Thrown thrown = take_until_thrown<DeviceFault>(pipeline, d, order, 32, 20);
    EXPECT_EQ(thrown.what, FailingUploads::message(1, 1));
    const int64_t waits = device.waits();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_LE(device.waits(), waits + 1) << "a worker started batches after the error";
  });
}

// Every worker's preprocessing throws (rows one value wider than its input): the loop gets the
// first one, as it was thrown.
TEST(InputPipelineFaults, APreprocessingErrorReachesTheLoopWithItsMessage) {
  const Data d = random_rows(100, 21);
  const ModelSpec spec = host_work(1, {3, 2});  // an input of 20
  CpuBackend host;
  ends_in_time([&] {
    auto pipeline =
        std::make_unique<InputPipeline>(std::vector<const ModelSpec*>{&spec},
                                        InputPipeline::Rows{d.x.data(), d.y.data(), 21, 1}, host);
    pipeline->begin_epoch(0, {shuffled(d.rows, 6)}, d.rows);
    try {
      pipeline->take(0);
      ADD_FAILURE() << "a batch no worker could prepare was taken";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "preprocessing: rows of 21 values for an input of 20");
    }
    EXPECT_NO_THROW(pipeline.reset());
  });
}

// A poisoned context: every fence's wait throws from then on, the destructor's too. The loop gets
// the error, and the destructor, which waits for every slot's upload, neither throws nor hangs,
// whether the loop took the error or never asked for another batch.
TEST(InputPipelineFaults, APoisonedDeviceIsReportedAndThePipelineStillGoes) {
  const Data d = random_rows(203, 20);
  const std::vector<int> order = shuffled(d.rows, 7);
  const ModelSpec spec = host_work(2, {2, 2});
  for (const bool taken : {true, false}) {
    SCOPED_TRACE(taken ? "the loop takes the error" : "the loop takes no other batch");
    FailingUploads device(2, -1);
    ends_in_time([&] {
      auto pipeline = std::make_unique<InputPipeline>(
          std::vector<const ModelSpec*>{&spec}, InputPipeline::Rows{d.x.data(), d.y.data(), 20, 1},
          device);
      pipeline->begin_epoch(0, {order}, d.rows);
      for (int64_t step = 0; step < 2; ++step) {
        pipeline->take(step);
        pipeline->release(step);  // records the slot's fence: the destructor waits for it
      }
      device.poison();
      if (taken) {
        // Steps 2 and 3 may have been prepared before the poison; step 4 waits for step 2's upload.
        const Thrown thrown = take_until_thrown<DeviceFault>(*pipeline, d, order, 32, 20, 2);
        EXPECT_NE(thrown.step, -1) << "no take threw";
        EXPECT_LE(thrown.step, 4);
        EXPECT_EQ(thrown.what, FailingUploads::kSticky);
      }
      EXPECT_NO_THROW(pipeline.reset());
    });
  }
}

}  // namespace
}  // namespace mf
