#include "study/modes/thread_groups.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "study/data_sets.h"
#include "study/model_worker.h"
#include "runtime/names.h"
#include "study/modes/sm_placement.h"
#include "study/pack_worker.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/start_barrier.h"

namespace mf {
namespace {

// The packs' sizes for the plan's note: each in order ("8, 8, 3"), or for many packs how many of
// each size ("1 x800, 2 x60"), so that the line stays a line.
std::string pack_sizes(const std::vector<std::vector<size_t>>& groups) {
  constexpr size_t kListed = 8;
  if (groups.size() <= kListed)
    return joined(groups,
                  [](const std::vector<size_t>& group) { return std::to_string(group.size()); });
  std::map<size_t, size_t> count;  // by size
  for (const std::vector<size_t>& group : groups) ++count[group.size()];
  return joined(count, [](const auto& size_n) {
    return std::to_string(size_n.first) + " x" + std::to_string(size_n.second);
  });
}

// What set the packs apart, for the plan's note: each cause (a pack_key field, a full pack, the
// data, the device, a failed entry) with the boundaries it is in, most first (", apart by
// fit.batch_size x80, layers[0].units x60"); "" for one pack.
std::string apart_by(const std::vector<std::string>& boundaries) {
  std::map<std::string, size_t> count;  // by cause
  for (const std::string& boundary : boundaries) {
    // "FIELD VALUE, not VALUE; FIELD ... (pack N)", a full pack's, a failed entry's
    for (size_t at = 0; at < boundary.size();) {
      const std::string first = boundary.substr(at, boundary.find(' ', at) - at);
      ++count[first == "pack" ? "a full pack" : first == "its" ? "a failed entry" : first];
      const size_t next = boundary.find("; ", at);
      at = next == std::string::npos ? boundary.size() : next + 2;
    }
  }
  if (count.empty()) return "";
  std::vector<std::pair<std::string, size_t>> causes(count.begin(), count.end());
  std::stable_sort(causes.begin(), causes.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return ", apart by " + joined(causes, [](const auto& cause) {
           return cause.first + " x" + std::to_string(cause.second);
         });
}

class ThreadGroupsMode final : public Mode {
 public:
  ThreadGroupsMode(ModeKind kind, const RunOptions& options, Grouping grouping, bool packs)
      : kind_(kind), options_(options), grouping_(std::move(grouping)), packs_(packs) {}
  ModeKind kind() const override { return kind_; }

  Phase run(std::span<const Job> jobs, const std::atomic<bool>& stop, Progress& progress,
            RungJudge* rungs) override {
    const GroupPlan plan = grouping_(jobs);
    const std::vector<std::vector<size_t>>& groups = plan.groups;
    // before the workers: they give their pools back
    std::vector<std::unique_ptr<Backend>> backends(groups.size());
    std::vector<std::unique_ptr<ModelWorker>> workers;
    for (const Job& job : jobs) workers.push_back(std::make_unique<ModelWorker>(job, options_));
    std::vector<std::unique_ptr<PackWorker>> packs;
    for (const std::vector<size_t>& group : groups) {
      std::vector<ModelWorker*> members;
      for (size_t i : group) members.push_back(workers[i].get());
      const std::optional<PackPlace> pack =
          packs_ ? std::optional(PackPlace{int(packs.size()), plan.boundaries[packs.size()]})
                 : std::nullopt;
      const auto line = [&progress](size_t job, const std::string& text) {
        progress.epoch(job, text);
      };
      packs.push_back(std::make_unique<PackWorker>(std::move(members), options_, pack,
                                                   TrainingWatch{&stop, line, nullptr, rungs}));
    }
    if (packs_)
      progress.note("multifit: " + std::string(name()) + ": " + std::to_string(jobs.size()) +
                    " models planned in " + std::to_string(groups.size()) +
                    (groups.size() == 1 ? " pack" : " packs") + " (" + pack_sizes(groups) + ")" +
                    apart_by(plan.boundaries) + "; a model that fails to build leaves its pack");
    // A bounded pool of host threads, never one per group: thread t drives groups t, t + T, t +
    // 2T...
    const size_t pool = std::min(groups.size(), max_training_threads(options_.backend));
    backend_options_ = sharing_threads(options_.backend, pool);
    placement_ = place_groups(jobs, groups, backend_options_, options_.sm_partitions);
    for (const std::string& split : placement_.notes())
      progress.note("multifit: " + std::string(name()) + ": " + split);
    StartBarrier barrier{int(pool)};
    std::vector<std::thread> threads;
    for (size_t t = 0; t < pool; ++t) {
      std::vector<size_t> own;  // the thread's groups
      for (size_t g = t; g < groups.size(); g += pool) own.push_back(g);
      try {
        threads.emplace_back([&, own] {
          for (size_t g : own) build(g, groups[g], jobs, workers, *packs[g], backends[g]);
          barrier.arrive_and_wait();
          train(own, groups, jobs, workers, packs, backends, progress);
        });
      } catch (const std::system_error& e) {  // no thread for it (a limit on threads or memory)
        for (size_t g : own)
          for (size_t i : groups[g]) {
            workers[i]->fail(std::string("cannot start its thread: ") + e.what(), 1);
            progress.ended(jobs[i].index, workers[i]->report(), workers[i]->exit_code());
          }
        barrier.leave();
      }
    }
    for (std::thread& t : threads) t.join();
    if (report_poisoned_context(workers, backends))
      for (size_t i = 0; i < jobs.size(); ++i)
        progress.ended(jobs[i].index, workers[i]->report(), workers[i]->exit_code());
    Phase phase;
    phase.released_s = barrier.released_s();
    phase.threads = int(threads.size());
    for (auto& worker : workers) {
      phase.reports.push_back(std::move(worker->report()));  // the worker's is not read again
      phase.exit_code = worse_exit_code(phase.exit_code, worker->exit_code());
    }
    packs.clear();  // the pools, then the backends, go after every model of the phase has finished
    return phase;
  }

 private:
  // Builds group g on the thread that trains it (the cpu backend sets the thread's float mode): its
  // backend (its own stream, on its green context's SMs where it has one), the device's data sets,
  // its pack.
  void build(size_t g, const std::vector<size_t>& group, std::span<const Job> jobs,
             std::vector<std::unique_ptr<ModelWorker>>& workers, PackWorker& pack,
             std::unique_ptr<Backend>& backend) {
    ModelWorker& lead = *workers[group.front()];
    const int device = jobs[group.front()].device;  // the same for every member
    DataSets* data = nullptr;
    lead.attempt([&] {
      backend = make_backend(placement_.options(g), std::cerr, placement_.partition(g));
      data = &data_for(device);
    });
    for (size_t i : group) {
      workers[i]->share_failure(lead);
      workers[i]->report().sms = placement_.sms(g);
    }
    if (data) pack.build(*backend, *data);
  }

  // Trains a thread's groups in turn, an epoch at a time: every group's epoch is queued on its own
  // stream before the first is waited for, so on a GPU they run at once. A group that ends is
  // waited for and its models' reports handed on.
  void train(const std::vector<size_t>& own, const std::vector<std::vector<size_t>>& groups,
             std::span<const Job> jobs, std::vector<std::unique_ptr<ModelWorker>>& workers,
             std::vector<std::unique_ptr<PackWorker>>& packs,
             std::vector<std::unique_ptr<Backend>>& backends, Progress& progress) {
    std::vector<size_t> training;
    for (size_t g : own) {
      packs[g]->begin_training();
      training.push_back(g);
    }
    while (!training.empty()) {
      // A group whose rung verdicts wait for other models' (study/sweep/rungs.h) sits out the
      // round; when every group of the thread does, the thread waits once for a verdict to change.
      bool may_wait = std::all_of(training.begin(), training.end(),
                                  [&](size_t g) { return packs[g]->waiting(); });
      std::vector<size_t> launched;
      for (size_t g : training)
        if (packs[g]->waiting())
          packs[g]->settle(std::exchange(may_wait, false) ? 0.1 : 0);
        else if (!packs[g]->done())
          packs[g]->launch_epoch(), launched.push_back(g);
      std::vector<size_t> still;
      for (size_t g : training) {
        if (!packs[g]->done() && std::find(launched.begin(), launched.end(), g) != launched.end())
          packs[g]->end_epoch();
        if (!packs[g]->done()) {
          still.push_back(g);
          continue;
        }
        ModelWorker& lead = *workers[groups[g].front()];
        if (backends[g]) lead.attempt([&] { backends[g]->synchronize(); });
        for (size_t i : groups[g]) {
          workers[i]->share_failure(lead);
          progress.ended(jobs[i].index, workers[i]->report(), workers[i]->exit_code());
        }
      }
      training = std::move(still);
    }
  }

  // A device fault poisons the CUDA context, and so every model of this process: each says so.
  // Returns whether one did.
  static bool report_poisoned_context(std::vector<std::unique_ptr<ModelWorker>>& workers,
                                      std::vector<std::unique_ptr<Backend>>& backends) {
    std::string fault;
    for (size_t i = 0; i < backends.size() && fault.empty(); ++i)
      if (backends[i]) fault = backends[i]->fault();
    if (fault.empty()) return false;
    for (auto& worker : workers)
      worker->fail(
          "the process's CUDA context was poisoned by a device fault (" + fault +
              "); the process's streams share it, so every model of the process is lost (processes mode isolates it)",
          1);
    return true;
  }

  // The process's data sets on `device`, with the backend that holds them, made on first use.
  DataSets& data_for(int device) {
    std::lock_guard lock(mutex_);
    Resident& resident = resident_[device];
    if (!resident.data) {
      resident.backend = make_backend(on_device(options_.backend, device), std::cerr);
      resident.data = std::make_unique<DataSets>(*resident.backend);
    }
    return *resident.data;
  }

  struct Resident {
    std::unique_ptr<Backend> backend;
    std::unique_ptr<DataSets> data;  // after the backend that holds them: freed first
  };
  const ModeKind kind_;
  const RunOptions& options_;
  // each group's: options_'s, with its share of the threads (set by run)
  BackendOptions backend_options_;
  SmPlacement placement_;  // each group's backend options: on its device and SMs (set by run)
  Grouping grouping_;
  bool packs_;
  std::mutex mutex_;
  std::map<int, Resident> resident_;
};

}  // namespace

std::unique_ptr<Mode> make_thread_groups_mode(ModeKind kind, const RunOptions& options,
                                              Grouping grouping, bool packs) {
  return std::make_unique<ThreadGroupsMode>(kind, options, std::move(grouping), packs);
}

}  // namespace mf
