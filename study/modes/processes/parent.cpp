// processes: one child process per model, the same binary started with posix_spawn (never fork
// after CUDA may have started, never a shell) as `multifit worker NAME`, with CUDA_VISIBLE_DEVICES
// set to the model's GPU in its environment, so its device 0 is that GPU, and its MPS
// (worker_mps.h: the pipe directory, its CUDA_MPS_ACTIVE_THREAD_PERCENTAGE). Each process has its
// own CUDA context: a device fault poisons only its own model. The exchange is in protocol.h.
#include "study/modes/mode.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>

#include "study/model_worker.h"
#include "study/modes/processes/probe.h"
#include "study/modes/processes/protocol.h"
#include "study/modes/processes/visible_device.h"
#include "study/modes/processes/worker_mps.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/child_process.h"

namespace mf {
namespace {

constexpr double kStopGrace_s = 5;  // a worker still building this long after Ctrl-C is killed
// The default stall timeout: never under a minute, and 10 times the worker's slowest epoch so far,
// so that a model whose epochs take minutes is not taken for stalled at its epoch's end
// (validation, the divergence check and the test set take no training steps).
constexpr double kStallFloor_s = 60, kStallFactor = 10;
constexpr double kWatchPeriod_s = 0.5;  // how often the stall watch looks at every worker

struct Child {
  Child(const Job& job, const RunOptions& options) : job(job), placeholder(job, options) {}
  const Job& job;
  std::unique_ptr<ChildProcess> process;  // null when it did not start
  ModelWorker placeholder;                // the model's report as far as the parent knows it
  std::string visible_devices;            // the worker's CUDA_VISIBLE_DEVICES
  std::optional<int> sm_share;            // its CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; absent: unset
  double spawned_s = 0, ready_s = 0;      // clock_seconds() at the spawn and at "ready"
  bool ready = false, released = false;   // said ready; sent go or stop
  bool done = false;                      // closed its stdout and was finished
  std::optional<ChildProcess::Usage> at_barrier;  // what it used when it said ready
  // as the worker said it at the barrier (start-up, plan, pool, data)
  std::optional<ModelReport> built;
  std::optional<ModelReport> report;  // as the worker returned it
  std::string unreadable;             // why a line of the worker's could not be read
  // The stall watch: its last sign of life (the spawn, CPU time used while it builds, its release,
  // each step and epoch line), its CPU time when last read, and its pace so far.
  double last_sign_s = 0, cpu_s = 0, epoch_start_s = 0, slowest_epoch_s = 0;
  std::string stalled;      // why it was killed as stalled
  std::optional<int> rung;  // the rung (its epochs) whose verdict it waits for, which is no stall
  // Its rungs as it said them and as they were judged: in its report if it dies before it returns
  // one, since the trials after it were judged against them.
  std::vector<RungResult> rungs;
  ModelReport final;  // once done: its report as the run records it
  int exit_code = 0;  // once done
};

// What the worker's environment adds to this process's: its GPU, and its MPS (worker_mps.h).
std::vector<std::string> environment_of(const Child& child) {
  std::vector<std::string> env{"CUDA_VISIBLE_DEVICES=" + child.visible_devices};
  if (const WorkerMps* mps = WorkerMps::in_use())
    env.insert(env.end(), mps->environment().begin(), mps->environment().end());
  if (child.sm_share)
    env.push_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" + std::to_string(*child.sm_share));
  return env;
}

// Seconds for a message: "2", "60", "0.5".
std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, s >= 10 ? "%.0f" : "%.2g", s);
  return text;
}

// The workers of a phase (or of a probe): their spawns, their lines, the stall watch, and each
// one's end, finished as its stdout closes.
class Workers {
 public:
  Workers(const RunOptions& options, Progress& progress, const std::atomic<bool>& stop,
          RungJudge* rungs = nullptr)
      : options_(options),
        progress_(progress),
        stop_(stop),
        rungs_(rungs),
        self_(self_executable()) {}

  // Spawns the job's worker and sends it its job; a bad entry, or a worker that cannot start, is
  // the placeholder's failure, and that child is done at once. `argv_name` is what ps shows.
  Child& start(const Job& job, const std::string& argv_name) {
    Child& child = *children_.emplace_back(std::make_unique<Child>(job, options_));
    const char* own = std::getenv("CUDA_VISIBLE_DEVICES");
    child.visible_devices =
        visible_device(own ? std::optional<std::string>(own) : std::nullopt, job.device);
    child.placeholder.report().visible_devices = child.visible_devices;
    if (const WorkerMps* mps = WorkerMps::in_use(); mps && mps->under_mps())
      child.sm_share = sm_share_of(job, options_);  // without MPS a share does nothing
    child.placeholder.attempt([&] {
      if (!job.spec) return;  // a bad entry has its error already: nothing to start
      child.spawned_s = child.last_sign_s = clock_seconds();
      child.process = std::make_unique<ChildProcess>(
          std::vector<std::string>{self_, "worker", argv_name}, environment_of(child));
      const nlohmann::json request = {{"options", to_json(options_)}, {"job", to_json(job)}};
      child.process->send(request.dump() + "\n");
    });
    if (!child.process) end(child);
    return child;
  }

  std::vector<std::unique_ptr<Child>>& children() { return children_; }

  // Sends go, or stop, to every worker at the barrier.
  void release(bool go) {
    const double now = clock_seconds();
    for (auto& child : children_)
      if (!child->done) {
        child->process->send(std::string(go ? kGo : kStop) + "\n");
        child->released = true;
        child->last_sign_s = child->epoch_start_s = now;
      }
  }

  // Reads every worker's lines until `enough(child)` holds or it has ended, for all of them, and
  // watches them for stalls meanwhile.
  template <class Enough>
  void wait_for(Enough enough) {
    for (double watched = clock_seconds();;) {
      std::vector<pollfd> fds;
      std::vector<Child*> polled;
      for (auto& child : children_)
        if (!child->done && !enough(*child)) {
          fds.push_back({child->process->output_fd(), POLLIN, 0});
          polled.push_back(child.get());
        }
      if (fds.empty()) return;
      if (poll(fds.data(), fds.size(), stop_ ? 100 : int(kWatchPeriod_s * 1000)) < 0 &&
          errno != EINTR)
        throw SystemError(std::string("poll over the worker processes failed: ") +
                          std::strerror(errno));
      for (size_t i = 0; i < fds.size(); ++i)
        if (fds[i].revents) read_from(*polled[i]);
      answer_rungs();
      if (const double now = clock_seconds(); now - watched >= kWatchPeriod_s) {
        watched = now;
        for (Child* child : polled) watch(*child, now);
      }
    }
  }

 private:
  void read_from(Child& child) {
    bool eof = false;
    for (const std::string& line : child.process->read_lines(&eof)) {
      const double now = clock_seconds();
      if (line.starts_with(kReady)) {
        child.ready = true;
        child.ready_s = now;
        child.at_barrier = child.process->usage();
        try {
          child.built = nlohmann::json::parse(line.substr(kReady.size())).get<ModelReport>();
        } catch (const std::exception& e) {
          child.unreadable = e.what();
        }
      } else if (line.starts_with(kStep)) {
        child.last_sign_s = now;
        progress_.step(child.job.index);
      } else if (line.starts_with(kRung)) {
        ask_rung(child, line.substr(kRung.size()));
      } else if (line.starts_with(kEpoch)) {
        child.last_sign_s = now;
        child.slowest_epoch_s = std::max(child.slowest_epoch_s, now - child.epoch_start_s);
        child.epoch_start_s = now;
        progress_.epoch(child.job.index, line.substr(kEpoch.size()));
      } else {
        try {
          child.report = nlohmann::json::parse(line).get<ModelReport>();
        } catch (const std::exception& e) {  // cut short by the worker's death, say
          child.unreadable = e.what();
        }
      }
    }
    if (eof) end(child);
  }

  // Kills a worker that has shown no sign of life for its stall timeout: while it builds, no CPU
  // time used (it says nothing until it is ready); once released, no step. At the barrier it waits
  // for the others, which is no stall.
  void watch(Child& child, double now) {
    if (child.done || !child.stalled.empty() || options_.stall_timeout_s == 0.0 ||
        (child.ready && !child.released) || child.rung)
      return;
    double limit = options_.stall_timeout_s.value_or(kStallFloor_s);
    if (!child.ready) {
      if (const auto usage = child.process->usage(); usage && usage->cpu_s > child.cpu_s) {
        child.cpu_s = usage->cpu_s;
        child.last_sign_s = now;
      }
    } else if (!options_.stall_timeout_s) {
      const double epoch = std::max(child.slowest_epoch_s, child.last_sign_s - child.epoch_start_s);
      limit = std::max(limit, kStallFactor * epoch);
    }
    if (now - child.last_sign_s <= limit) return;
    const std::string seconds = seconds_text(limit) + " s";
    child.stalled = child.ready
                        ? "stalled: no step for " + seconds
                        : "stalled: no CPU time used for " + seconds + " while it built its model";
    try {
      child.process->kill_group(SIGKILL);
    } catch (const SystemError&) {  // it ended meanwhile: its end is read as any other
    }
  }

  // The worker's stdout has closed: it is reaped, its model's report made final, and the run told.
  void end(Child& child) {
    child.done = true;
    child.final = finish(child);
    child.final.sm_share = child.sm_share;  // the worker's environment, which only the parent knows
    if (!child.process) {
      child.exit_code = child.placeholder.exit_code();
    } else {
      const ExitStatus status = child.process->wait();
      child.exit_code = status.exited ? status.code : 1;
    }
    progress_.ended(child.job.index, child.final, child.exit_code);
  }

  // The model's report: the worker's, or the parent's placeholder saying how the worker ended.
  static ModelReport finish(Child& child) {
    if (!child.process) return child.placeholder.report();
    const ExitStatus status = child.process->wait();
    const std::string worker =
        "the worker process (pid " + std::to_string(child.process->pid()) + ") ";
    if (!child.report) {
      // what it had built stands; its training is lost
      if (child.built) child.placeholder.report() = *child.built;
      const std::string lost =
          child.built ? "; what it measured in training is lost" : "; its measurements are lost";
      if (!child.stalled.empty())
        child.placeholder.fail(child.stalled + ", so " + worker + "was killed" + lost,
                               kExitFailure);
      else
        child.placeholder.fail(
            worker + status.describe() +
                (child.ready ? " during training" : " before its model was built") +
                (child.unreadable.empty()
                     ? ""
                     : " (its report could not be read: " + child.unreadable + ")") +
                lost,
            1);
      ModelReport report = child.placeholder.report();
      report.fit.rungs = child.rungs;
      report.pid = child.process->pid();
      report.device = child.job.device;
      if (child.ready) report.startup_s = child.ready_s - child.spawned_s;
      return report;
    }
    ModelReport report = std::move(*child.report);
    report.device = child.job.device;  // the worker saw it as its device 0
    if (!status.exited) {  // it reported, then died: what it measured stands, its end is said
      report.status = ModelStatus::failed;
      report.error +=
          (report.error.empty() ? "" : "; ") + worker + status.describe() + " after it reported";
    }
    // Its start-up as the run sees it: spawning, loading the program, then building.
    if (child.ready) report.startup_s = child.ready_s - child.spawned_s;
    return report;
  }

  // "rung EPOCHS VALUE": the worker's metric at a rung, recorded in the run's table; it waits for
  // the verdict (at once where the table has it). Without a table (a probe) every rung is passed.
  void ask_rung(Child& child, const std::string& said) {
    std::istringstream in(said);
    int epochs = 0;
    std::string value;
    in >> epochs >> value;
    const std::optional<double> metric =
        value == "none" ? std::nullopt : std::optional(std::strtod(value.c_str(), nullptr));
    child.rung = epochs;
    child.rungs.push_back({epochs, metric.value_or(NAN), true});
    if (rungs_) rungs_->judge(child.job.index, epochs, metric);
  }

  // Sends each verdict that has come in to the worker that waits for it. After a Ctrl-C every
  // worker is let go on: its own interrupt stops it after its next step.
  void answer_rungs() {
    for (auto& child : children_) {
      if (!child->rung || child->done) continue;
      RungJudge::Verdict verdict = RungJudge::Verdict::go_on;
      if (rungs_ && !stop_) verdict = rungs_->verdict(child->job.index, *child->rung);
      if (verdict == RungJudge::Verdict::undecided) continue;
      child->rung.reset();
      child->rungs.back().kept = verdict != RungJudge::Verdict::stop;
      child->last_sign_s = clock_seconds();
      child->process->send(std::string(verdict == RungJudge::Verdict::stop ? kRungStop : kRungGo) +
                           "\n");
    }
  }

  const RunOptions& options_;
  Progress& progress_;
  const std::atomic<bool>& stop_;
  RungJudge* rungs_;  // the run's scheduler; null: none (every rung passed)
  const std::string self_;
  std::vector<std::unique_ptr<Child>> children_;
};

// The start barrier: every worker has built its model, failed, or died. After a Ctrl-C, one still
// building after a grace period is killed, so that the run cannot hang there.
void wait_for_the_barrier(Workers& workers, const std::atomic<bool>& stop) {
  std::optional<double> stopped_at;
  workers.wait_for([&](Child& c) {
    if (stop && !stopped_at) stopped_at = clock_seconds();
    if (!c.ready && stopped_at && clock_seconds() - *stopped_at > kStopGrace_s)
      c.process->kill(SIGKILL);
    return c.ready;
  });
}

class ProcessesMode final : public Mode {
 public:
  explicit ProcessesMode(const RunOptions& options) : options_(options) {}
  ModeKind kind() const override { return ModeKind::processes; }

  Phase run(std::span<const Job> jobs, const std::atomic<bool>& stop, Progress& progress,
            RungJudge* rungs) override {
    RunOptions each = options_;  // what every worker is sent: its share of the threads
    each.backend = sharing_threads(options_.backend, jobs.size());
    Workers workers(each, progress, stop, rungs);
    for (const Job& job : jobs) workers.start(job, job.name);
    wait_for_the_barrier(workers, stop);
    Phase phase;
    phase.released_s = clock_seconds();
    workers.release(!stop);
    // Training. Workers have process groups of their own: a Ctrl-C at the terminal reaches this
    // process only, which passes it on once.
    bool passed_on = false;
    workers.wait_for([&](Child&) {
      if (stop && !passed_on) {
        passed_on = true;
        for (auto& c : workers.children())
          if (!c->done) c->process->kill(SIGINT);
      }
      return false;
    });
    for (auto& child : workers.children()) {
      phase.exit_code = worse_exit_code(phase.exit_code, child->exit_code);
      phase.reports.push_back(std::move(child->final));
    }
    return phase;
  }

 private:
  const RunOptions& options_;
};

}  // namespace

std::unique_ptr<Mode> make_processes_mode(const RunOptions& options) {
  return std::make_unique<ProcessesMode>(options);
}

WorkerProbe probe_worker(const Job& job, const RunOptions& options, const std::atomic<bool>& stop) {
  RunOptions briefly = options;
  briefly.calibration_steps = kProbeSteps;
  briefly.scheduler.reset();  // a probe measures a worker's footprint, never a rung
  // Workers tell Progress of a model by its job's index, its place in the sweep, which is rarely 0
  // (a resumed run's first model left, a shard's): the probe is the one model of a progress of one,
  // at 0.
  Job probe_job = job;
  probe_job.index = 0;
  Progress quiet({job.name}, true);
  Workers workers(briefly, quiet, stop);
  // Named apart from the run's own workers, for ps and for whoever looks for those by name.
  Child& child = workers.start(probe_job, "probe:" + job.name);
  wait_for_the_barrier(workers, stop);
  workers.release(!stop);
  workers.wait_for([](Child&) { return false; });
  WorkerProbe probe;
  if (child.at_barrier) probe.threads = child.at_barrier->threads;
  probe.peak_resident_bytes = child.final.process_peak_rss_bytes.value_or(
      child.at_barrier ? child.at_barrier->resident_bytes : 0);
  probe.report = std::move(child.final);
  return probe;
}

}  // namespace mf
