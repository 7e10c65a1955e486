#pragma once
// One model's life in a run, the same in every mode: prepare (start-up: its data, its plan checked
// against its cap), then, as a member of a pack (study/pack_worker.h: a pack of one outside
// packed mode), get its pool and weights, wait for the start signal, train, and finish (its fit,
// evaluation, memory share, saved weights) and report. Every failure is caught into the report
// (status oom, failed or diverged, with the message) so that the other models go on and the result
// document is still written.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>

#include "study/data_sets.h"
#include "study/job.h"
#include "study/report/report.h"
#include "nn/model.h"
#include "runtime/clock.h"

namespace mf {

class ModelWorker {
 public:
  // The model's start-up is timed from here.
  ModelWorker(const Job& job, const RunOptions& options);

  // Runs one stage of the model's work (the mode's too: making its backend), catching what it
  // throws into the report's status and the exit code; a stage after a failure does not run. The
  // model and its pool stay until the worker goes: the mode releases pools after the phase.
  void attempt(const std::function<void()>& stage);
  // The rest of start-up short of the model: data from `data` (read and uploaded once per process),
  // checked against the spec, and the plan checked against the cap before any pool takes anything.
  void prepare(Backend& backend, DataSets& data);
  // What training left for this model, member `member` of `model`: its fit, its test evaluation
  // (when one ran), its memory share and its saved weights.
  // `interrupted`: the fit stopped for Ctrl-C (not for a calibration's step limit).
  void finish(const FitResult& fit, bool interrupted, const std::optional<Evaluation>& test,
              Model& model, int member);
  // Ends the timing of start-up (prepare does, and the pack when its model is built).
  void end_startup();

  // Marks the model failed for a reason outside it (the run was interrupted before it trained, its
  // process's CUDA context was poisoned), keeping any error it had; `code` as exit_code().
  void fail(const std::string& why, int code);
  // Takes on the failure of `lead` (when this model has none), whose stage (the pack's backend,
  // model or training) was this model's too.
  void share_failure(const ModelWorker& lead);

  bool ok() const { return report_.status == ModelStatus::ok; }
  // It failed (a stage threw, or it diverged, ran out of memory, was interrupted); a model that the
  // scheduler stopped at a rung did not.
  bool failed() const { return !ok() && report_.status != ModelStatus::stopped; }
  const Job& job() const { return job_; }
  const ResidentData* data() const { return data_; }  // after prepare()
  ModelReport& report() { return report_; }
  // An ExitCode (runtime/error.h): kExitFailure when it diverged or the machine failed,
  // kExitMistake for a user's mistake or memory over a cap, kExitInterrupted after Ctrl-C.
  int exit_code() const { return code_; }

 private:
  const Job& job_;
  const RunOptions& options_;
  const ResidentData* data_ = nullptr;
  ModelReport report_;
  int code_ = 0;
  Clock::time_point startup_;
};

// Why a model that never trained did not: the run was interrupted first.
inline constexpr const char* kNotStarted =
    "not started: the run was interrupted (Ctrl-C or SIGTERM)";
// How the error of a model whose training was interrupted begins.
inline constexpr const char* kInterrupted = "interrupted (Ctrl-C or SIGTERM): ";

// The worst of two exit codes: 130 (Ctrl-C) over 2 (a user's mistake) over 1 (a failure) over 0.
int worse_exit_code(int a, int b);

}  // namespace mf
