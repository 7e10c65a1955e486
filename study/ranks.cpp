#include "study/ranks.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "nn/model.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/machine_resources.h"
#include "runtime/process_memory.h"
#include "study/model_worker.h"

namespace mf {
namespace {

using nlohmann::json;

// The messages, each a JSON object:
//   a rank to rank 0   {"reports": [{"report": R, "exit_code": c}, ...], "capacity": C}   its last share's models, and an ask
//                      {"final": {...}}                                                 after an empty answer: its figures
//   rank 0 to a rank   {"jobs": [i, ...]}                                               places in the jobs; [] when none are left
// A report travels without its step timeline: each rank's clock is its own machine's, so the
// timelines of several would not line up (and a large sweep's would be a large message).

// One model of a share, as it travels: without its timeline.
json ended_json(ModelReport report, int exit_code) {
  report.fit.steps.clear();
  report.fit.epoch_spans.clear();
  report.fit.input_spans.clear();
  return {{"report", report}, {"exit_code", exit_code}};
}

// What one rank trains: its shares, one run_mode each, with the concurrency it chose once.
class RankTrainer {
 public:
  RankTrainer(ModeKind mode, const std::vector<Job>& jobs, const RunOptions& options, const std::atomic<bool>& stop,
              const RunRecord& record, const MpiWorld& world)
      : mode_(mode), jobs_(jobs), options_(options), stop_(stop), rank_(world.rank()), start_s_(clock_seconds()) {
    options_.quiet = true;  // the epoch lines of R ranks would interleave: one line per model as it ends instead
    quiet_ = options.quiet;
    choice_ = choose_concurrency(mode, jobs, options, stop);
    // The ranks on one node share its memory: each takes its part of the machine's bound.
    if (!options.concurrency && mode != ModeKind::serial && world.local_size() > 1) {
      choice_.per_phase = std::max<size_t>(1, choice_.per_phase / size_t(world.local_size()));
      choice_.reason += "; shared by the " + std::to_string(world.local_size()) + " ranks on this host";
    }
    journal_ = record.on_ended;
    // One mode for every share: its backends and data sets stay resident from one share to the next.
    runner_ = make_mode(mode, options_);
  }

  size_t capacity() const { return mode_ == ModeKind::serial ? 1 : choice_.per_phase; }

  // Trains the jobs at `places`; returns their reports, each with its exit code.
  json train(const std::vector<size_t>& places) {
    std::vector<Job> share;
    for (size_t p : places) share.push_back(jobs_[p]);
    RunRecord record;
    record.concurrency = choice_;
    std::map<size_t, int> codes;  // by job index, as each model ends (Progress::ended holds its lock)
    record.on_ended = [this, &codes](size_t index, const ModelReport& report, int code) {
      codes[index] = code;
      ModelReport mine = report;
      mine.mpi_rank = rank_;
      if (journal_) journal_(index, mine, code);
      if (!quiet_ && code != kExitInterrupted) say_ended(mine);
    };
    int code = 0;  // rank 0 takes each model's from its report's message
    RunReport run = run_mode(*runner_, share, options_, stop_, &code, record);
    json reports = json::array();
    for (ModelReport& m : run.models) {
      // A model with no end said was never started: the run was stopped first (run_mode); no rank trained it.
      const auto said = codes.find(m.index);
      if (said != codes.end()) {
        m.mpi_rank = rank_;
        ++models_;
      }
      samples_ += m.samples;
      reports.push_back(ended_json(std::move(m), said == codes.end() ? kExitInterrupted : said->second));
    }
    if (run.startup_s) startup_s_ = startup_s_.value_or(0) + *run.startup_s;
    if (run.train_s) train_s_ += *run.train_s;
    threads_ = std::max(threads_, run.training_threads.value_or(0));
    return reports;
  }

  // This rank's figures, for rank 0.
  json final_figures() const {
    RunPart part{rank_, host_name(), clock_seconds() - start_s_, startup_s_, std::nullopt, models_};
    if (train_s_ > 0) part.samples_per_s = double(samples_) / train_s_;
    return {{"part", part}, {"train_s", train_s_}, {"samples", samples_},
            {"concurrency", models_ > 0 ? int(capacity()) : 0}, {"reason", choice_.reason}, {"threads", threads_}};
  }

 private:
  void say_ended(const ModelReport& m) {
    std::lock_guard lock(say_);
    std::string line = "multifit: rank " + std::to_string(rank_) + ": " + m.name + " " + to_string(m.status);
    if (m.fitted)
      line += ", " + std::to_string(m.fit.epochs.size()) + (m.fit.epochs.size() == 1 ? " epoch in " : " epochs in ") +
              format_duration(m.fit.train_s);
    std::fprintf(stderr, "%s\n", line.c_str());
  }

  ModeKind mode_;
  const std::vector<Job>& jobs_;
  RunOptions options_;
  const std::atomic<bool>& stop_;
  int rank_;
  double start_s_;
  bool quiet_ = false;
  ConcurrencyChoice choice_;
  std::unique_ptr<Mode> runner_;
  Progress::EndedSink journal_;
  std::mutex say_;
  int models_ = 0, threads_ = 0;
  int64_t samples_ = 0;
  std::optional<double> startup_s_;
  double train_s_ = 0;
};

// A rank other than 0: asks for work until there is none, or until it is stopped (a signal to this
// rank alone: the others go on with the rest), then sends its figures.
void serve_rank_0(RankTrainer& trainer, MpiWorld& world, const std::atomic<bool>& stop) {
  json unsent = json::array();  // the last share's reports
  while (!stop) {
    world.send(0, json{{"reports", unsent}, {"capacity", trainer.capacity()}}.dump());
    unsent = json::array();
    const std::vector<size_t> places = json::parse(world.receive(0)).at("jobs").get<std::vector<size_t>>();
    if (places.empty()) break;
    unsent = trainer.train(places);
  }
  world.send(0, json{{"final", trainer.final_figures()}, {"reports", unsent}}.dump());
}

// Rank 0's side: the units in order, taken by the asks of every rank, its own trainer's included.
class Dispatcher {
 public:
  Dispatcher(std::vector<WorkUnit> units, int ranks) : units_(std::move(units)), ranks_(size_t(ranks)) {
    for (const WorkUnit& unit : units_) left_ += unit.jobs.size();
  }

  // The next units, as many as `capacity` models hold and no more than the rank's part of those
  // left (guided self-scheduling: the shares shrink as the work runs out, so that no rank takes the
  // last of it while the others wait), at least one unit however large; none once all are out or
  // the dispatch is closed. Thread-safe. A rank stopped by a signal stops asking, rank 0 too: the
  // others are still given the rest.
  std::vector<size_t> take(size_t capacity) {
    std::lock_guard lock(mutex_);
    const size_t most = std::min(capacity, std::max<size_t>(1, (left_ + ranks_ - 1) / ranks_));
    std::vector<size_t> places;
    while (!closed_ && next_ < units_.size() &&
           (places.empty() || places.size() + units_[next_].jobs.size() <= most)) {
      places.insert(places.end(), units_[next_].jobs.begin(), units_[next_].jobs.end());
      ++next_;
    }
    left_ -= places.size();
    return places;
  }
  void close() {  // no more work for anyone: rank 0 has failed
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  void add(const json& reports) {
    std::lock_guard lock(mutex_);
    for (const json& r : reports) ended_.push_back(r);
  }
  std::vector<json> ended() { return ended_; }  // once every rank is done

 private:
  std::vector<WorkUnit> units_;
  size_t ranks_, left_ = 0;  // models not handed out
  bool closed_ = false;
  size_t next_ = 0;
  std::vector<json> ended_;
  std::mutex mutex_;
};

}  // namespace

double estimated_cost(const Job& job) {
  return job.spec ? double(job.spec->fit.epochs) * double(Model::param_count(*job.spec)) : 0;
}

std::vector<WorkUnit> plan_work(ModeKind mode, const std::vector<Job>& jobs, const RunOptions& options, int ranks,
                                size_t capacity) {
  std::vector<std::vector<size_t>> groups;
  if (mode == ModeKind::packed) {
    const size_t per_rank = (jobs.size() + size_t(ranks) - 1) / size_t(std::max(ranks, 1));
    const size_t bound = std::max<size_t>(1, std::min(per_rank, capacity));
    groups = plan_packs(jobs, options.pack_size > 0 ? options.pack_size : int(std::min(bound, kMaxPackSize)));
  } else {
    for (size_t i = 0; i < jobs.size(); ++i) groups.push_back({i});
  }
  std::vector<WorkUnit> units;
  for (std::vector<size_t>& group : groups) {
    double cost = 0;
    for (size_t i : group) cost += estimated_cost(jobs[i]);
    units.push_back({std::move(group), cost});
  }
  std::stable_sort(units.begin(), units.end(), [](const WorkUnit& a, const WorkUnit& b) { return a.cost > b.cost; });
  return units;
}

RunReport run_over_ranks(ModeKind mode, const std::vector<Job>& all_jobs, const RunOptions& options,
                         const std::atomic<bool>& stop, int* exit_code, const RunRecord& record, MpiWorld& world) {
  const double start = clock_seconds();
  // The models still to train (rank 0 alone knows the journal's; the others are handed places in these).
  std::vector<Job> jobs;
  if (world.rank() == 0) {
    for (const Job& job : all_jobs)
      if (!record.ended || !record.ended->contains(job.index)) jobs.push_back(job);
  }
  const std::vector<size_t> to_train = json::parse(world.broadcast(json([&] {
                                                     std::vector<size_t> indices;
                                                     for (const Job& job : jobs) indices.push_back(job.index);
                                                     return indices;
                                                   }()).dump()))
                                           .get<std::vector<size_t>>();
  if (world.rank() != 0) {
    std::map<size_t, const Job*> by_index;
    for (const Job& job : all_jobs) by_index[job.index] = &job;
    for (size_t index : to_train) jobs.push_back(*by_index.at(index));
  }
  RankTrainer trainer(mode, jobs, options, stop, record, world);
  if (world.rank() != 0) {
    serve_rank_0(trainer, world, stop);
    RunReport run;
    run.mode = to_string(mode);
    return run;
  }

  // Rank 0: its own trainer on a thread, taking work as the other ranks do; this thread answers them.
  Dispatcher dispatcher(plan_work(mode, jobs, options, world.size(), trainer.capacity()), world.size());
  std::exception_ptr failure;  // of rank 0's own training: the run cannot go on without its reports
  std::atomic<bool> failed = false;
  std::thread own([&] {
    try {
      for (std::vector<size_t> places; !stop && !(places = dispatcher.take(trainer.capacity())).empty();)
        dispatcher.add(trainer.train(places));
    } catch (...) {
      failure = std::current_exception();
      failed = true;
    }
  });
  std::map<int, json> finals;  // by rank
  try {
    while (int(finals.size()) < world.size() - 1 && !failed) {
      const std::optional<int> from = world.waiting();
      if (!from) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));  // a share's ask waits no longer
        continue;
      }
      const json message = json::parse(world.receive(*from));
      dispatcher.add(message.at("reports"));
      if (message.contains("final")) finals[*from] = message.at("final");
      else world.send(*from, json{{"jobs", dispatcher.take(message.at("capacity").get<size_t>())}}.dump());
    }
  } catch (...) {  // an MPI failure: rank 0's thread ends before the failure goes on (the job is aborted)
    dispatcher.close();
    own.join();
    throw;
  }
  own.join();
  if (failure) std::rethrow_exception(failure);  // the others wait on rank 0: the caller aborts the job
  finals[0] = trainer.final_figures();

  // The run's report: every model in sweep order, the journal's as they ended, the rest as their ranks sent them.
  RunReport run;
  run.mode = to_string(mode);
  run.pools_kept = options.keep_pools && mode == ModeKind::serial;
  run.injected_fault = options.inject_fault;
  std::map<size_t, std::pair<ModelReport, int>> trained;
  for (const json& e : dispatcher.ended()) {
    ModelReport m = e.at("report").get<ModelReport>();
    trained[m.index] = {std::move(m), e.at("exit_code").get<int>()};
  }
  for (const Job& job : all_jobs) {
    if (const ModelReport* ended = ended_before(job, record, exit_code)) {
      run.models.push_back(*ended);
      ++run.resumed_models;
    } else if (const auto t = trained.find(job.index); t != trained.end()) {
      run.models.push_back(t->second.first);
      *exit_code = worse_exit_code(*exit_code, t->second.second);
    } else {  // never handed out: the run was stopped first
      run.models.push_back(not_started(job, options));
      *exit_code = worse_exit_code(*exit_code, kExitInterrupted);
    }
  }
  describe_models(run);
  run.wall_s = clock_seconds() - start;
  // The ranks train side by side: the run's start-up and training are its slowest rank's, its
  // throughput every rank's samples over that training time.
  int64_t samples = 0;
  double train_s = 0;
  int concurrency = 0, threads = 0;
  for (const auto& [rank, figures] : finals) {
    RunPart part = figures.at("part").get<RunPart>();
    if (part.startup_s) run.startup_s = std::max(run.startup_s.value_or(0), *part.startup_s);
    samples += figures.at("samples").get<int64_t>();
    train_s = std::max(train_s, figures.at("train_s").get<double>());
    concurrency += figures.at("concurrency").get<int>();
    threads += figures.at("threads").get<int>();
    run.ranks.push_back(std::move(part));
  }
  if (samples > 0 && train_s > 0) {
    run.train_s = train_s;
    run.samples_per_s = double(samples) / train_s;
  }
  run.concurrency = concurrency;
  run.concurrency_reason = std::to_string(world.size()) + " ranks, each training at most its own concurrency at once (rank 0: " +
                           finals[0].at("reason").get<std::string>() + ")";
  if (threads > 0) run.training_threads = threads;
  run.gpu_note = options.backend.kind == BackendKind::cuda
                     ? "no one GPU summary for the ranks' GPUs: each model's process_device_bytes is its own process's"
                     : "no GPU sampled: the " + std::string(to_string(options.backend.kind)) + " backend runs on the CPU";
  run.host_peak_rss_bytes = peak_resident_bytes();
  return run;
}

}  // namespace mf
