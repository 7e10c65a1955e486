#pragma once
// A pack's life: its members prepare one by one, so that a member with a bad spec, data, cap or
// weights file fails alone; the prepared ones form one Model (nn/model.h) on one backend, wait at
// the start barrier, and train in one PackFit (nn/fit.h); each member then finishes with its own
// results. A failure of the shared stages (the pack's model, its training) is every member's.
// Outside packed mode every model is a pack of one.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nn/fit.h"
#include "study/model_worker.h"

namespace mf {

// An epoch's line of the model with job index `job`.
using JobProgress = std::function<void(size_t job, const std::string& line)>;

// What watches a pack's training: its epoch lines, by the member's job index; the flag that stops
// it after the current step (Ctrl-C); and, when set, where it counts its training steps as they are
// taken (FitOptions::steps).
struct TrainingWatch {
  const std::atomic<bool>* stop = nullptr;
  JobProgress progress;
  std::atomic<int64_t>* steps = nullptr;
  RungJudge* rungs = nullptr;  // the run's scheduler (study/sweep/rungs.h), which knows members by
                               // job index; none: no rungs
};

// A pack of packed mode's plan (modes/mode.h's plan_packs): its number in the phase, and why it is
// not part of an earlier pack ("" for the first).
struct PackPlace {
  int number = 0;
  std::string boundary;
};

class PackWorker {
 public:
  // pack: where the plan put it, recorded in its members' reports (none: a model alone, streams or
  // serial mode).
  PackWorker(std::vector<ModelWorker*> members, const RunOptions& options,
             std::optional<PackPlace> pack, TrainingWatch watch);
  ~PackWorker();  // releases the pack's pool

  // Each member's prepare(), then the model of those prepared, their weights files and the pack's
  // fit, warmed up (PackFit::warm_up): all of a pack's start-up, before the start barrier, so that
  // its first step after it is an ordinary one.
  void build(Backend& backend, DataSets& data);

  // Training, an epoch at a time, so that one host thread can drive several packs in turn (their
  // epochs queued on their own streams before any is waited for): begin_training(), then the
  // calls of PackFit's loop (nn/fit.h's train_epochs) until done(); after the last epoch, the test
  // evaluation
  // where a member is still ok and each member's finish. A failure is the lead member's and so
  // every member's, and ends the training. Nothing trains when no member was prepared.
  void begin_training();
  bool done() const { return fit_ == nullptr; }
  // A member's rung verdict after the last epoch waits for other models (PackFit::waiting): no
  // launch_epoch() until settle() has it.
  bool waiting() const { return fit_ && fit_->waiting(); }
  void settle(double timeout_s);
  void launch_epoch();
  void end_epoch();
  // All of the above for this pack alone: begin_training(), then train_epochs(*this).
  void train();

 private:
  // Runs a stage of the shared training on the lead member; a failure ends the training.
  void attempt(const std::function<void()>& stage);
  void finish_training();

  std::vector<ModelWorker*> members_, prepared_;
  const RunOptions& options_;
  std::optional<PackPlace> pack_;
  const TrainingWatch watch_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<PackFit> fit_;  // built, until the training ends
  bool faults_ = false;  // a member is --inject-fault's: the pack faults after its first epoch
};

}  // namespace mf
