// A processes-mode child: one model in its own process, exchanging lines with the parent as
// protocol.h describes.
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "backends/factory.h"
#include "runtime/error.h"
#include "runtime/interrupt.h"
#include "runtime/process_memory.h"
#include "study/data_sets.h"
#include "study/model_worker.h"
#include "study/modes/processes/protocol.h"
#include "study/pack_worker.h"

namespace mf {
namespace {

// The pipe to the parent: the process's stdout when it started. Anything else that writes to stdout
// (a library's message) goes to stderr instead, so that it cannot break a line of the exchange.
FILE* take_stdout_for_the_parent() {
  const int fd = dup(STDOUT_FILENO);
  FILE* pipe = fd >= 0 ? fdopen(fd, "w") : nullptr;
  if (!pipe || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    throw SystemError("multifit worker: cannot set up the pipe to the parent");
  return pipe;
}

// The pipe's writers, the main thread and the heartbeat, one whole line at a time.
class Parent {
 public:
  explicit Parent(FILE* pipe) : pipe_(pipe) {}
  void say(const std::string& line) {
    std::lock_guard lock(mutex_);
    std::fputs(line.c_str(), pipe_);
    std::fputc('\n', pipe_);
    std::fflush(pipe_);
  }

 private:
  FILE* pipe_;
  std::mutex mutex_;
};

// While it lives, says "step N" about once a second when fit's step count has moved since the last
// time: the parent's sign that training goes on (its stall timeout). Per step, not per epoch, since
// an epoch may take minutes, and an epoch line alone cannot tell a long epoch from a stall; the
// step loop pays only fit's relaxed store of the count (FitOptions::steps), this thread the rest.
class Heartbeat {
 public:
  Heartbeat(Parent& parent, const std::atomic<int64_t>& steps)
      : thread_([this, &parent, &steps] {
          int64_t said = 0;
          std::unique_lock lock(mutex_);
          while (!wake_.wait_for(lock, std::chrono::duration<double>(kHeartbeat_s),
                                 [&] { return done_; }))
            if (const int64_t now = steps.load(std::memory_order_relaxed); now != said)
              parent.say(std::string(kStep) + std::to_string(said = now));
        }) {}
  ~Heartbeat() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;  // last: it starts once the rest is made
};

// The run's scheduler as a worker sees it: the parent holds the table (study/sweep/rungs.h); at
// each rung the worker says its metric and waits for the verdict on its stdin.
class ParentRungs final : public RungJudge {
 public:
  ParentRungs(Parent& parent, const SchedulerSpec& spec) : parent_(parent), spec_(spec) {}
  const std::string& metric() const override { return spec_.metric; }
  bool judges(size_t trial, int epochs) const override { return spec_.is_rung(trial, epochs); }
  Verdict judge(size_t, int epochs, std::optional<double> value) override {
    char text[32] = "none";
    if (value) std::snprintf(text, sizeof text, "%.17g", *value);
    parent_.say(std::string(kRung) + std::to_string(epochs) + " " + text);
    std::string line;
    if (!std::getline(std::cin, line)) return Verdict::stop;  // the parent is gone: so is the run
    return line == kRungStop ? Verdict::stop : Verdict::go_on;
  }
  Verdict verdict(size_t, int) override { return Verdict::go_on; }  // judge() waits for it
  void wait(double) override {}
  void ended(size_t) override {}  // the parent learns it from the worker's report

 private:
  Parent& parent_;
  const SchedulerSpec spec_;
};

}  // namespace

int run_child_process() {
  const std::atomic<bool>& stop = stop_on_interrupt();
  Parent parent(take_stdout_for_the_parent());
  std::string line;
  if (!std::getline(std::cin, line))
    throw UserError("multifit worker: no job on stdin (it is started by 'multifit run')");
  const nlohmann::json request = nlohmann::json::parse(line);
  const RunOptions options = run_options_from_json(request.at("options"));
  Job job = job_from_json(request.at("job"));
  job.device = 0;  // CUDA_VISIBLE_DEVICES shows this process its one GPU as device 0

  std::unique_ptr<Backend> backend;  // declared before the model, which gives its pool back to it
  std::unique_ptr<DataSets> data;
  ModelWorker worker(job, options);
  worker.attempt([&] {
    backend = make_backend(options.backend, std::cerr);
    data = std::make_unique<DataSets>(*backend);
  });
  std::atomic<int64_t> steps{0};
  const auto epoch_line = [&](size_t, const std::string& epoch) {
    parent.say(std::string(kEpoch) + epoch);
  };
  std::optional<ParentRungs> rungs;
  if (options.scheduler) rungs.emplace(parent, *options.scheduler);
  PackWorker model({&worker}, options, std::nullopt,
                   {&stop, epoch_line, &steps, rungs ? &*rungs : nullptr});  // a pack of one
  if (backend) model.build(*backend, *data);
  parent.say(std::string(kReady) + nlohmann::json(worker.report()).dump());  // at the start barrier
  const bool go = std::getline(std::cin, line) && line == kGo;
  if (!go) worker.fail(kNotStarted, kExitInterrupted);
  {
    const Heartbeat heartbeat(parent, steps);
    model.train();
    if (backend) worker.attempt([&] { backend->synchronize(); });
  }
  worker.report().process_peak_rss_bytes = peak_resident_bytes();
  parent.say(nlohmann::json(worker.report()).dump());
  return worker.exit_code();
}

}  // namespace mf
