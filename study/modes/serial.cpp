// serial: the models one after another, as a Keras user's loop with clear_session() between them.
// One backend per device (one stream, one context) serves them all; a model's pool is released
// before the next is built, so a sweep needs the memory of its largest model, not of all of them
// (unless
// --keep-pools keeps every pool to the end, to measure what a loop without clear_session() holds).
#include "study/modes/mode.h"

#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "study/data_sets.h"
#include "study/model_worker.h"
#include "study/pack_worker.h"
#include "runtime/bytes.h"
#include "runtime/clock.h"
#include "runtime/float_mode.h"

namespace mf {
namespace {

class SerialMode final : public Mode {
 public:
  explicit SerialMode(const RunOptions& options) : options_(options) {}
  ModeKind kind() const override { return ModeKind::serial; }

  // The phase trains on the caller's thread, its denormals flushed while it does: the cpu backend
  // flushes them on the thread that runs its operations (runtime/float_mode.h), and the caller's
  // host arithmetic after the phase (the reports) keeps IEEE's. A thread of its own per phase cost
  // each model a wake-up, which beside two busy processes on two cores took about 1.7 ms: 512 tiny
  // models started up in 0.9 s, against 0.04 s on a quiet machine.
  Phase run(std::span<const Job> jobs, const std::atomic<bool>& stop, Progress& progress,
            RungJudge* rungs) override {
    std::optional<DenormalsFlushedHere> flushed;
    if (options_.backend.kind == BackendKind::cpu ||
        options_.backend.kind == BackendKind::automatic)
      flushed.emplace();
    return train(jobs, stop, progress, rungs);
  }

 private:
  Phase train(std::span<const Job> jobs, const std::atomic<bool>& stop, Progress& progress,
              RungJudge* rungs) {
    Phase phase;
    phase.threads = 1;
    for (const Job& job : jobs) {
      std::optional<size_t> held;
      Trained trained{std::make_unique<ModelWorker>(job, options_), nullptr};
      ModelWorker& worker = *trained.worker;
      OnDevice& device = devices_[job.device];
      worker.attempt([&] {
        if (device.backend) return;
        device.backend = make_backend(on_device(options_.backend, job.device), std::cerr);
        device.data = std::make_unique<DataSets>(*device.backend);
      });
      const auto line = [&](size_t index, const std::string& text) { progress.epoch(index, text); };
      // a pack of one, its pool with it
      trained.model =
          std::make_unique<PackWorker>(std::vector<ModelWorker*>{&worker}, options_, std::nullopt,
                                       TrainingWatch{&stop, line, nullptr, rungs});
      if (device.backend) trained.model->build(*device.backend, *device.data);
      phase.released_s = clock_seconds();  // alone: nothing to wait for
      trained.model->train();
      if (device.backend) held = device.backend->upstream().in_use_bytes();
      phase.reports.push_back(std::move(worker.report()));  // the worker's is not read again
      const int code = worker.exit_code();
      phase.exit_code = worse_exit_code(phase.exit_code, code);
      if (options_.keep_pools) kept_.push_back(std::move(trained));
      // the model goes, and its pool with it, before the next model is built
      else
        trained.release();
      if (held) report_memory(phase.reports.back(), *device.backend, *held, progress);
      progress.ended(job.index, phase.reports.back(), code);
    }
    return phase;
  }

  // A model and its pack of one: the pack (its model and pool) goes before the worker it points to.
  struct Trained {
    std::unique_ptr<ModelWorker> worker;
    std::unique_ptr<PackWorker> model;
    void release() { model.reset(), worker.reset(); }
    ~Trained() { release(); }
    Trained(std::unique_ptr<ModelWorker> w, std::unique_ptr<PackWorker> m)
        : worker(std::move(w)), model(std::move(m)) {}
    Trained(Trained&&) = default;
  };

  // Says what the backend held (pools and data sets) when the model ended, and what releasing it
  // gave back; with --keep-pools nothing is released, and what is held grows with every model.
  void report_memory(ModelReport& report, Backend& backend, size_t held, Progress& progress) const {
    report.in_use_before_release_bytes = held;
    if (options_.keep_pools) {
      if (report.memory.reserved_bytes > 0)
        progress.model_note("multifit: serial: kept " + report.name +
                            "'s pool (--keep-pools): memory in use " + format_bytes(held) +
                            ", every pool so far and the data sets");
      return;
    }
    report.in_use_after_release_bytes = backend.upstream().in_use_bytes();
    if (report.memory.reserved_bytes > 0)  // it had a pool to give back
      progress.model_note("multifit: serial: released " + report.name + ": memory in use " +
                          format_bytes(held) + " -> " +
                          format_bytes(*report.in_use_after_release_bytes) +
                          " (the data sets stay resident)");
  }

  // A device's backend and the data sets it holds, made for the first model on it.
  struct OnDevice {
    std::unique_ptr<Backend> backend;
    std::unique_ptr<DataSets> data;  // declared after the backend that holds them: freed first
  };

  const RunOptions& options_;
  std::map<int, OnDevice> devices_;  // by CUDA device (--devices)
  // --keep-pools: every model of the run (each phase is one), and its pool, until the mode goes;
  // declared after the backends they hold memory of, so freed first
  std::vector<Trained> kept_;
};

}  // namespace

std::unique_ptr<Mode> make_serial_mode(const RunOptions& options) {
  return std::make_unique<SerialMode>(options);
}

}  // namespace mf
