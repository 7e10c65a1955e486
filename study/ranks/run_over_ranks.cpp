#include "study/ranks/run_over_ranks.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "nn/model.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/machine_resources.h"
#include "runtime/process_memory.h"
#include "study/model_worker.h"
#include "study/ranks/messages.h"
#include "runtime/formats.h"

namespace mf {
namespace {

// What one rank trains: its shares, one run_mode each, with the concurrency it chose once; and its
// figures over them all.
class RankTrainer {
 public:
  // `start_s`: clock_seconds() when the run began on this rank, which its wall is from.
  RankTrainer(ModeKind mode, const std::vector<Job>& jobs, const RunOptions& options,
              const std::atomic<bool>& stop, const RunRecord& record, const MpiWorld& world,
              double start_s)
      : mode_(mode),
        jobs_(jobs),
        options_(options),
        stop_(stop),
        rank_(world.rank()),
        start_s_(start_s) {
    // the epoch lines of R ranks would interleave: one line per model as it ends instead
    options_.quiet = true;
    quiet_ = options.quiet;
    choice_ = choose_concurrency(mode, jobs, options, stop);
    // The ranks on one node share its memory: each takes its part of the machine's bound.
    if (!options.concurrency && mode != ModeKind::serial && world.local_size() > 1) {
      choice_.per_phase = std::max<size_t>(1, choice_.per_phase / size_t(world.local_size()));
      choice_.reason +=
          "; shared by the " + std::to_string(world.local_size()) + " ranks on this host";
    }
    journal_ = record.on_ended;
    // One mode for every share: its backends and data sets stay resident from one share to the
    // next.
    runner_ = make_mode(mode, options_);
  }

  size_t capacity() const { return mode_ == ModeKind::serial ? 1 : choice_.per_phase; }

  // Trains the jobs at `places`; returns their reports, each with its exit code.
  std::vector<EndedModel> train(const std::vector<size_t>& places) {
    std::vector<Job> share;
    for (size_t p : places) share.push_back(jobs_[p]);
    RunRecord record;
    record.concurrency = choice_;
    // by job index, as each model ends (Progress::ended holds its lock)
    std::map<size_t, int> codes;
    record.on_ended = [this, &codes](size_t index, const ModelReport& report, int code) {
      codes[index] = code;
      ModelReport mine = report;
      mine.mpi_rank = rank_;
      if (journal_) journal_(index, mine, code);
      if (!quiet_ && code != kExitInterrupted) say_ended(mine);
    };
    int code = 0;  // rank 0 takes each model's from its report's message
    RunReport run = run_mode(*runner_, share, options_, stop_, &code, record);
    std::vector<EndedModel> ended;
    for (ModelReport& m : run.models) {
      // A model with no end said was never started: the run was stopped first (run_mode); no rank
      // trained it.
      const auto said = codes.find(m.index);
      if (said != codes.end()) {
        m.mpi_rank = rank_;
        ++models_;
      }
      samples_ += m.samples;
      ended.push_back({std::move(m), said == codes.end() ? kExitInterrupted : said->second});
    }
    add_figures(run);
    return ended;
  }

  // This rank's figures, for rank 0: its wall until now.
  PartFigures figures() const {
    PartFigures f = figures_;
    f.line = {rank_, host_name(), clock_seconds() - start_s_, startup_s_, std::nullopt, models_};
    if (f.train_s) f.line.samples_per_s = double(samples_) / *f.train_s;
    f.samples = samples_;
    f.concurrency = models_ > 0 ? int(capacity()) : 0;
    f.concurrency_reason = choice_.reason;
    f.host_peak_rss_bytes = peak_resident_bytes();
    return f;
  }

 private:
  // A share's run's figures, added to this rank's: its times and its workers' memory summed (one
  // share after another), its threads the most of any share's.
  void add_figures(const RunReport& run) {
    if (run.startup_s) startup_s_ = startup_s_.value_or(0) + *run.startup_s;
    if (run.train_s) figures_.train_s = figures_.train_s.value_or(0) + *run.train_s;
    if (run.training_threads)
      figures_.training_threads =
          std::max(figures_.training_threads.value_or(0), *run.training_threads);
    if (run.workers_peak_rss_bytes)
      figures_.workers_peak_rss_bytes =
          figures_.workers_peak_rss_bytes.value_or(0) + *run.workers_peak_rss_bytes;
  }

  void say_ended(const ModelReport& m) {
    std::lock_guard lock(say_);
    std::string line =
        "multifit: rank " + std::to_string(rank_) + ": " + m.name + " " + to_string(m.status);
    if (m.fitted)
      line += ", " + std::to_string(m.fit.epochs.size()) +
              (m.fit.epochs.size() == 1 ? " epoch in " : " epochs in ") +
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
  int models_ = 0;
  int64_t samples_ = 0;
  std::optional<double> startup_s_;
  PartFigures figures_;  // those summed over the shares as they end (add_figures)
};

// A rank other than 0: asks for work until there is none, or until it is stopped (a signal to this
// rank alone: the others go on with the rest), then sends its figures.
void serve_rank_0(RankTrainer& trainer, MpiWorld& world, const std::atomic<bool>& stop) {
  std::vector<EndedModel> unsent;  // the last share's models
  while (!stop) {
    world.send(0, message_text(FromRank{std::move(unsent), trainer.capacity(), std::nullopt}));
    unsent.clear();
    const Share share = message_from<Share>(world.receive(0));
    if (share.places.empty()) break;
    unsent = trainer.train(share.places);
  }
  world.send(0, message_text(FromRank{std::move(unsent), std::nullopt, trainer.figures()}));
}

// Rank 0's side: the units in order, taken by the asks of every rank, its own trainer's included.
class Dispatcher {
 public:
  Dispatcher(std::vector<WorkUnit> units, int ranks)
      : units_(std::move(units)), ranks_(size_t(ranks)) {
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
  void add(std::vector<EndedModel> ended) {
    std::lock_guard lock(mutex_);
    for (EndedModel& e : ended) ended_.push_back(std::move(e));
  }
  std::vector<EndedModel> ended() { return std::move(ended_); }  // once every rank is done

 private:
  std::vector<WorkUnit> units_;
  size_t ranks_, left_ = 0;  // models not handed out
  bool closed_ = false;
  size_t next_ = 0;
  std::vector<EndedModel> ended_;
  std::mutex mutex_;
};

// The models still to train, the same on every rank: rank 0 alone knows the journal's, and tells
// the others their job indices.
std::vector<Job> jobs_on_every_rank(const std::vector<Job>& all_jobs, const RunRecord& record,
                                    MpiWorld& world) {
  std::vector<Job> jobs = world.rank() == 0 ? jobs_to_train(all_jobs, record) : std::vector<Job>{};
  ToTrain to_train;
  for (const Job& job : jobs) to_train.jobs.push_back(job.index);
  to_train = message_from<ToTrain>(world.broadcast(message_text(to_train)));
  if (world.rank() != 0) {
    std::map<size_t, const Job*> by_index;
    for (const Job& job : all_jobs) by_index[job.index] = &job;
    for (size_t index : to_train.jobs) jobs.push_back(*by_index.at(index));
  }
  return jobs;
}

// What rank 0 gathers: every model the ranks trained, as it ended, and every rank's figures by
// rank.
struct Gathered {
  std::vector<EndedModel> ended;
  std::map<int, PartFigures> figures;
};

// Rank 0's side: its own trainer on a thread, taking `units` as the other ranks do, while this
// thread (the only one that calls MPI) answers them, until every rank has sent its figures. Throws
// what rank 0's training or MPI threw: the others wait on rank 0, and the caller aborts the job.
Gathered dispatch(RankTrainer& trainer, std::vector<WorkUnit> units, MpiWorld& world,
                  const std::atomic<bool>& stop) {
  Dispatcher dispatcher(std::move(units), world.size());
  std::exception_ptr failure;  // of rank 0's own training: the run cannot go on without its reports
  std::atomic<bool> failed = false;
  std::thread own([&] {
    try {
      for (std::vector<size_t> places;
           !stop && !(places = dispatcher.take(trainer.capacity())).empty();)
        dispatcher.add(trainer.train(places));
    } catch (...) {
      failure = std::current_exception();
      failed = true;
    }
  });
  Gathered gathered;
  try {
    while (int(gathered.figures.size()) < world.size() - 1 && !failed) {
      const std::optional<int> from = world.waiting();
      if (!from) {
        // a share's ask waits no longer
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        continue;
      }
      FromRank message = message_from<FromRank>(world.receive(*from));
      dispatcher.add(std::move(message.ended));
      if (message.figures)
        gathered.figures[*from] = std::move(*message.figures);
      else
        world.send(*from, message_text(Share{dispatcher.take(message.capacity.value())}));
    }
  } catch (...) {  // an MPI failure: rank 0's thread ends before the failure goes on (the job is
                   // aborted)
    dispatcher.close();
    own.join();
    throw;
  }
  own.join();
  if (failure) std::rethrow_exception(failure);
  gathered.figures[0] = trainer.figures();
  gathered.ended = dispatcher.ended();
  return gathered;
}

// The run's models in sweep order: the journal's as they ended, the rest as their ranks sent them,
// and a model never handed out (the run was stopped first) not started. *exit_code takes the worst
// of theirs.
std::vector<ModelReport> in_sweep_order(const std::vector<Job>& all_jobs,
                                        std::vector<EndedModel> ended, const RunRecord& record,
                                        const RunOptions& options, int* exit_code) {
  std::map<size_t, EndedModel> trained;
  for (EndedModel& e : ended) trained[e.report.index] = std::move(e);
  std::vector<ModelReport> models;
  for (const Job& job : all_jobs) {
    if (const ModelReport* before = ended_before(job, record, exit_code)) {
      models.push_back(*before);
    } else if (const auto t = trained.find(job.index); t != trained.end()) {
      models.push_back(std::move(t->second.report));
      *exit_code = worse_exit_code(*exit_code, t->second.exit_code);
    } else {
      models.push_back(not_started(job, options));
      *exit_code = worse_exit_code(*exit_code, kExitInterrupted);
    }
  }
  return models;
}

}  // namespace

double estimated_cost(const Job& job) {
  return job.spec ? double(job.spec->fit.epochs) * double(Model::param_count(*job.spec)) : 0;
}

std::vector<WorkUnit> plan_work(ModeKind mode, const std::vector<Job>& jobs,
                                const RunOptions& options, int ranks, size_t capacity) {
  std::vector<std::vector<size_t>> groups;
  if (mode == ModeKind::packed) {
    const size_t per_rank = (jobs.size() + size_t(ranks) - 1) / size_t(std::max(ranks, 1));
    const size_t bound = std::max<size_t>(1, std::min(per_rank, capacity));
    groups = plan_packs(jobs, options.pack_size > 0 ? options.pack_size
                                                    : int(std::min(bound, kMaxPackSize)))
                 .groups;
  } else {
    for (size_t i = 0; i < jobs.size(); ++i) groups.push_back({i});
  }
  std::vector<WorkUnit> units;
  for (std::vector<size_t>& group : groups) {
    double cost = 0;
    for (size_t i : group) cost += estimated_cost(jobs[i]);
    units.push_back({std::move(group), cost});
  }
  std::stable_sort(units.begin(), units.end(),
                   [](const WorkUnit& a, const WorkUnit& b) { return a.cost > b.cost; });
  return units;
}

RunReport run_over_ranks(ModeKind mode, const std::vector<Job>& all_jobs, const RunOptions& options,
                         const std::atomic<bool>& stop, int* exit_code, const RunRecord& record,
                         MpiWorld& world) {
  const double start = clock_seconds();
  const std::vector<Job> jobs = jobs_on_every_rank(all_jobs, record, world);
  RankTrainer trainer(mode, jobs, options, stop, record, world, start);
  RunReport run;
  if (world.rank() != 0) {
    serve_rank_0(trainer, world, stop);
    note_options(run, mode, options);
    return run;
  }
  Gathered gathered = dispatch(
      trainer, plan_work(mode, jobs, options, world.size(), trainer.capacity()), world, stop);
  // Rank 0 alone took models as they ended from the journal.
  gathered.figures[0].resumed_models = int(all_jobs.size() - jobs.size());
  std::vector<PartFigures> ranks;
  for (auto& [rank, figures] : gathered.figures) ranks.push_back(std::move(figures));
  run = combine_parts(
      PartsRan::together, ranks,
      in_sweep_order(all_jobs, std::move(gathered.ended), record, options, exit_code));
  note_options(run, mode, options);
  run.gpu_note =
      options.backend.kind == BackendKind::cuda
          ? "no one GPU summary for the ranks' GPUs: each model's process_device_bytes is its own process's"
          : no_gpu_note(options.backend.kind);
  return run;
}

}  // namespace mf
