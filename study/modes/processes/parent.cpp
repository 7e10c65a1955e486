// processes: one child process per model, the same binary started with posix_spawn (never fork
// after CUDA may have started, never a shell) as `multifit worker NAME`, with CUDA_VISIBLE_DEVICES
// set to the model's GPU in its environment, so its device 0 is that GPU. Each process has its own
// CUDA context: a device fault poisons only its own model. The exchange is in protocol.h.
#include "study/modes/mode.h"

#include <poll.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>

#include "study/model_worker.h"
#include "study/modes/processes/protocol.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/child_process.h"

namespace mf {
namespace {

constexpr double kStopGrace_s = 5;  // a worker still building this long after Ctrl-C is killed

struct Child {
  Child(const Job& job, const RunOptions& options) : index(job.index), placeholder(job, options) {}
  size_t index;                            // the job's place in the run, for its progress line
  std::unique_ptr<ChildProcess> process;  // null when it did not start
  ModelWorker placeholder;                 // the model's report as far as the parent knows it
  std::string visible_devices;             // the worker's CUDA_VISIBLE_DEVICES
  double spawned_s = 0, ready_s = 0;       // clock_seconds() at the spawn and at "ready"
  bool ready = false, done = false;        // said ready; closed its stdout
  std::optional<ModelReport> report;       // as the worker returned it
  std::string unreadable;                  // why a line of the worker's could not be read
};

// The GPU that `device` names for the worker's CUDA_VISIBLE_DEVICES: entry `device` of this
// process's own list when it has one, so that --devices means the same GPUs in every mode.
std::string visible_device(int device) {
  const char* own = std::getenv("CUDA_VISIBLE_DEVICES");
  if (own && *own) {
    std::stringstream list(own);
    std::string entry;
    for (int i = 0; std::getline(list, entry, ','); ++i)
      if (i == device) return entry;
  }
  return std::to_string(device);
}

class ProcessesMode final : public Mode {
 public:
  explicit ProcessesMode(const RunOptions& options) : options_(options), self_(self_executable()) {}
  ModeKind kind() const override { return ModeKind::processes; }

  Phase run(std::span<const Job> jobs, const std::atomic<bool>& stop, Progress& progress) override {
    std::vector<std::unique_ptr<Child>> children;
    for (const Job& job : jobs) children.push_back(start(job));
    // The start barrier: every worker has built its model, failed, or died. After a Ctrl-C, one still
    // building after a grace period is killed, so that the run cannot hang there.
    std::optional<double> stopped_at;
    wait_for(children, progress, stop, [&](Child& c) {
      if (stop && !stopped_at) stopped_at = clock_seconds();
      if (!c.ready && stopped_at && clock_seconds() - *stopped_at > kStopGrace_s) c.process->kill(SIGKILL);
      return c.ready;
    });
    Phase phase;
    phase.released_s = clock_seconds();
    for (auto& child : children)
      if (child->process && !child->done) child->process->send(std::string(stop ? kStop : kGo) + "\n");
    // Training. Workers have process groups of their own: a Ctrl-C at the terminal reaches this
    // process only, which passes it on once.
    bool passed_on = false;
    wait_for(children, progress, stop, [&](Child&) {
      if (stop && !passed_on) {
        passed_on = true;
        for (auto& c : children)
          if (c->process && !c->done) c->process->kill(SIGINT);
      }
      return false;
    });
    for (size_t i = 0; i < jobs.size(); ++i) {
      Child& child = *children[i];
      ModelReport report = finish(child, jobs[i]);
      const int code = exit_code_of(child);
      progress.ended(jobs[i].index, report, code);
      phase.exit_code = worse_exit_code(phase.exit_code, code);
      phase.reports.push_back(std::move(report));
    }
    return phase;
  }

 private:
  // Spawns the job's worker and sends it its job; a bad entry, or a worker that cannot start, is
  // the placeholder's failure.
  std::unique_ptr<Child> start(const Job& job) {
    auto child = std::make_unique<Child>(job, options_);
    child->visible_devices = visible_device(job.device);
    child->placeholder.report().visible_devices = child->visible_devices;
    child->placeholder.attempt([&] {
      if (!job.spec) return;  // a bad entry has its error already: nothing to start
      child->spawned_s = clock_seconds();
      child->process = std::make_unique<ChildProcess>(std::vector<std::string>{self_, "worker", job.name},
                                                       std::vector<std::string>{"CUDA_VISIBLE_DEVICES=" +
                                                                                child->visible_devices});
      const nlohmann::json request = {{"options", to_json(options_)}, {"job", to_json(job)}};
      child->process->send(request.dump() + "\n");
    });
    if (!child->process) child->done = true;
    return child;
  }

  // Reads every child's lines until `enough(child)` holds or its stdout closes, for all children.
  template <class Enough>
  void wait_for(std::vector<std::unique_ptr<Child>>& children, Progress& progress, const std::atomic<bool>& stop,
                Enough enough) {
    for (;;) {
      std::vector<pollfd> fds;
      std::vector<Child*> polled;
      for (auto& child : children)
        if (!child->done && !enough(*child)) {
          fds.push_back({child->process->output_fd(), POLLIN, 0});
          polled.push_back(child.get());
        }
      if (fds.empty()) return;
      if (poll(fds.data(), fds.size(), stop ? 100 : 500) < 0 && errno != EINTR)
        throw SystemError(std::string("poll over the worker processes failed: ") + std::strerror(errno));
      for (size_t i = 0; i < fds.size(); ++i)
        if (fds[i].revents) read_from(*polled[i], progress);
    }
  }

  static void read_from(Child& child, Progress& progress) {
    bool eof = false;
    for (const std::string& line : child.process->read_lines(&eof)) {
      if (line == kReady) {
        child.ready = true;
        child.ready_s = clock_seconds();
      } else if (line.starts_with(kEpoch)) {
        progress.epoch(child.index, line.substr(kEpoch.size()));
      } else {
        try {
          child.report = nlohmann::json::parse(line).get<ModelReport>();
        } catch (const std::exception& e) {  // cut short by the worker's death, say
          child.unreadable = e.what();
        }
      }
    }
    if (eof) child.done = true;
  }

  // The model's report: the worker's, or the parent's placeholder saying how the worker ended.
  ModelReport finish(Child& child, const Job& job) {
    if (!child.process) return child.placeholder.report();
    const ExitStatus status = child.process->wait();
    const std::string worker = "the worker process (pid " + std::to_string(child.process->pid()) + ") ";
    if (!child.report) {
      child.placeholder.fail(worker + status.describe() + (child.ready ? " during training" : " before its model was built") +
                                 (child.unreadable.empty() ? "" : " (its report could not be read: " + child.unreadable + ")") +
                                 "; its measurements are lost",
                             1);
      ModelReport report = child.placeholder.report();
      report.pid = child.process->pid();
      return report;
    }
    ModelReport report = std::move(*child.report);
    report.device = job.device;  // the worker saw it as its device 0
    if (!status.exited) {  // it reported, then died: what it measured stands, its end is said
      report.status = ModelStatus::failed;
      report.error += (report.error.empty() ? "" : "; ") + worker + status.describe() + " after it reported";
    }
    // Its start-up as the run sees it: spawning, loading the program, then building.
    if (child.ready) report.startup_s = child.ready_s - child.spawned_s;
    return report;
  }

  static int exit_code_of(Child& child) {
    if (!child.process) return child.placeholder.exit_code();
    const ExitStatus status = child.process->wait();
    return status.exited ? status.code : 1;
  }

  const RunOptions& options_;
  const std::string self_;
};

}  // namespace

std::unique_ptr<Mode> make_processes_mode(const RunOptions& options) {
  return std::make_unique<ProcessesMode>(options);
}

}  // namespace mf
