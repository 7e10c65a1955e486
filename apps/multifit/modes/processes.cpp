// processes: one worker process per model, the same binary started with posix_spawn (never fork
// after CUDA may have started, never a shell) as `multifit worker NAME`, with CUDA_VISIBLE_DEVICES
// set to the model's GPU in its environment, so its device 0 is that GPU. Each process has its own
// CUDA context: a device fault poisons only its own model.
//
// Over the worker's stdin and stdout (apps/multifit/worker_command.cpp):
//   parent -> worker  {"options": RunOptions, "index": i}   the job: the worker reads the sweep itself
//   worker -> parent  ready                                 built (or failed to): at the start barrier
//   parent -> worker  go | stop                             every worker is at the barrier | Ctrl-C
//   worker -> parent  epoch LINE                            an epoch's progress line, as it ends
//   worker -> parent  {report}                              the model's report (report.h's wire form)
// A worker that dies leaves its model failed with how it ended; the others go on.
#include "apps/multifit/modes/mode.h"

#include <poll.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "apps/multifit/model_worker.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/worker_process.h"

namespace mf {
namespace {

constexpr std::string_view kEpoch = "epoch ";

struct Child {
  Child(const Job& job, const RunOptions& options) : index(job.index), placeholder(job, options) {}
  size_t index;                            // the job's place in the run, for its progress line
  std::unique_ptr<WorkerProcess> process;  // null when it did not start
  ModelWorker placeholder;                 // the model's report as far as the parent knows it
  double spawned_s = 0, ready_s = 0;       // clock_seconds() at the spawn and at "ready"
  bool ready = false, done = false;        // said ready; closed its stdout
  std::optional<ModelReport> report;       // as the worker returned it
};

// The worker's environment entry that makes GPU `device` its device 0.
std::string cuda_visible_devices(int device) {
  std::string entry = "CUDA_VISIBLE_DEVICES=";
  return entry.append(std::to_string(device));
}

class ProcessesMode final : public Mode {
 public:
  explicit ProcessesMode(const RunOptions& options) : options_(options), self_(self_executable()) {}
  const char* name() const override { return "processes"; }

  Phase run(std::span<const Job> jobs, const std::atomic<bool>& stop, Progress& progress) override {
    std::vector<std::unique_ptr<Child>> children;
    for (const Job& job : jobs) {
      auto child = std::make_unique<Child>(job, options_);
      child->placeholder.attempt([&] {
        if (!job.spec) return;  // a bad entry has its error already: nothing to start
        child->spawned_s = clock_seconds();
        child->process = std::make_unique<WorkerProcess>(
            std::vector<std::string>{self_, "worker", job.name},
            std::vector<std::string>{cuda_visible_devices(job.device)});
        const nlohmann::json request = {{"options", to_json(options_)}, {"index", job.index}};
        child->process->send(request.dump() + "\n");
      });
      if (!child->process) child->done = true;
      children.push_back(std::move(child));
    }
    // The start barrier: every worker has built its model, failed, or died.
    wait_for(children, stop, progress, [](Child& c) { return c.ready; });
    Phase phase;
    phase.released_s = clock_seconds();
    for (auto& child : children)
      if (child->process && !child->done) child->process->send(stop ? "stop\n" : "go\n");
    bool forwarded = false;
    wait_for(children, stop, progress, [&](Child&) {
      if (stop && !forwarded) {  // a Ctrl-C at the terminal reaches the workers too; a kill of the parent does not
        forwarded = true;
        for (auto& c : children)
          if (c->process && !c->done) c->process->kill(SIGINT);
      }
      return false;
    });
    for (size_t i = 0; i < jobs.size(); ++i) {
      Child& child = *children[i];
      ModelReport report = finish(child, jobs[i]);
      phase.exit_code = worse_exit_code(phase.exit_code, exit_code_of(child));
      phase.reports.push_back(std::move(report));
    }
    return phase;
  }

 private:
  // Reads every child's lines until `enough(child)` holds or its stdout closes, for all children.
  template <class Enough>
  void wait_for(std::vector<std::unique_ptr<Child>>& children, const std::atomic<bool>& stop, Progress& progress,
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
      for (size_t i = 0; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        Child& child = *polled[i];
        bool eof = false;
        for (const std::string& line : child.process->read_lines(&eof)) {
          if (line == "ready") {
            child.ready = true;
            child.ready_s = clock_seconds();
          } else if (line.starts_with(kEpoch)) {
            progress.epoch(child.index, line.substr(kEpoch.size()));
          }
          else child.report = model_report_from_wire(nlohmann::json::parse(line));
        }
        if (eof) child.done = true;
      }
    }
  }

  // The model's report: the worker's, or the parent's placeholder saying how the worker ended.
  ModelReport finish(Child& child, const Job& job) {
    if (!child.process) return child.placeholder.report();
    const ExitStatus status = child.process->wait();
    if (!child.report) {
      ModelReport report = child.placeholder.report();
      report.status = ModelStatus::failed;
      report.error = "the worker process (pid " + std::to_string(child.process->pid()) + ") " + status.describe() +
                     (child.ready ? " during training" : " before its model was built") + "; its measurements are lost";
      report.pid = child.process->pid();
      return report;
    }
    ModelReport report = std::move(*child.report);
    report.device = job.device;  // the worker saw it as its device 0
    report.process_peak_rss_bytes = status.peak_rss_bytes;
    if (!status.exited) {  // it reported, then died: what it measured stands, its end is said
      report.status = ModelStatus::failed;
      report.error += std::string(report.error.empty() ? "" : "; ") + "the worker process (pid " +
                      std::to_string(child.process->pid()) + ") " + status.describe() + " after it reported";
    }
    // Its start-up as the run sees it: spawning, loading the program and the sweep, then building.
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
