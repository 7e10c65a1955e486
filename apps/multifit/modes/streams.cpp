// streams: every model of a phase on its own host thread, with its own backend (its own CUDA stream
// and library handles) and pool, in one process. Each data set is uploaded once per device and
// shared. Every thread builds its model, then waits at the start barrier: pools are taken before it
// and released after the phase, so nothing that synchronizes the whole device (cudaMalloc, cudaFree)
// happens while another model trains.
#include "apps/multifit/modes/mode.h"

#include <iostream>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

#include "apps/multifit/data_sets.h"
#include "apps/multifit/model_worker.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/start_barrier.h"

namespace mf {
namespace {

class StreamsMode final : public Mode {
 public:
  explicit StreamsMode(const RunOptions& options) : options_(options) {}
  const char* name() const override { return "streams"; }

  Phase run(std::span<const Job> jobs, const std::atomic<bool>& stop, Progress& progress) override {
    std::vector<std::unique_ptr<Backend>> backends(jobs.size());  // before the workers: they give their pools back
    std::vector<std::unique_ptr<ModelWorker>> workers;
    for (const Job& job : jobs) workers.push_back(std::make_unique<ModelWorker>(job, options_));
    StartBarrier barrier(int(jobs.size()));
    std::vector<std::thread> threads;
    for (size_t i = 0; i < jobs.size(); ++i) {
      try {
        threads.emplace_back([&, i] {
          ModelWorker& worker = *workers[i];
          // Made on the thread that runs it: the cpu backend sets the thread's float mode.
          worker.attempt([&] { backends[i] = make_backend(with_device(jobs[i].device), std::cerr); });
          if (backends[i]) worker.attempt([&] { worker.build(*backends[i], data_for(jobs[i].device)); });
          barrier.arrive_and_wait();
          worker.train(&stop, [&](const std::string& line) { progress.epoch(jobs[i].index, line); });
          if (backends[i]) worker.attempt([&] { backends[i]->synchronize(); });
        });
      } catch (const std::system_error& e) {  // no thread for it (a limit on threads or memory)
        workers[i]->fail(std::string("cannot start its thread: ") + e.what(), 1);
        barrier.leave();
      }
    }
    for (std::thread& t : threads) t.join();
    report_poisoned_context(workers, backends);
    Phase phase;
    phase.released_s = barrier.released_s();
    for (auto& worker : workers) {
      phase.reports.push_back(worker->report());
      phase.exit_code = worse_exit_code(phase.exit_code, worker->exit_code());
    }
    return phase;  // the pools, then the backends, go after every model of the phase has finished
  }

 private:
  // A device fault poisons the CUDA context, and so every model of this process: each says so.
  static void report_poisoned_context(std::vector<std::unique_ptr<ModelWorker>>& workers,
                                      std::vector<std::unique_ptr<Backend>>& backends) {
    std::string fault;
    for (size_t i = 0; i < backends.size() && fault.empty(); ++i)
      if (backends[i]) fault = backends[i]->fault();
    if (fault.empty()) return;
    for (auto& worker : workers)
      worker->fail("the process's CUDA context was poisoned by a device fault (" + fault +
                       "); streams share it, so every model of the process is lost (processes mode isolates it)",
                   1);
  }

  BackendOptions with_device(int device) const {
    BackendOptions options = options_.backend;
    options.device = device;
    return options;
  }

  // The process's data sets on `device`, with the backend that holds them, made on first use.
  DataSets& data_for(int device) {
    std::lock_guard lock(mutex_);
    Resident& resident = resident_[device];
    if (!resident.data) {
      resident.backend = make_backend(with_device(device), std::cerr);
      resident.data = std::make_unique<DataSets>(*resident.backend);
    }
    return *resident.data;
  }

  struct Resident {
    std::unique_ptr<Backend> backend;
    std::unique_ptr<DataSets> data;  // after the backend that holds them: freed first
  };
  const RunOptions& options_;
  std::mutex mutex_;
  std::map<int, Resident> resident_;
};

}  // namespace

std::unique_ptr<Mode> make_streams_mode(const RunOptions& options) { return std::make_unique<StreamsMode>(options); }

}  // namespace mf
