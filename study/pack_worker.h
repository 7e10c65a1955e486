#pragma once
// A pack's life: its members prepare one by one, so that a member with a bad spec, data, cap or
// weights file fails alone; the prepared ones form one Model (nn/model.h) on one backend, wait at
// the start barrier, and train in one fit_pack; each member then finishes with its own results. A
// failure of the shared stages (the pack's model, its training) is every member's. Outside packed
// mode every model is a pack of one.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "study/model_worker.h"

namespace mf {

// An epoch's line of member `member` of a pack.
using MemberProgress = std::function<void(int member, const std::string& line)>;

// Trains `model`, whose members are `members` in order (each prepared): fit_pack, the test
// evaluation where a member is still ok, then each member's finish.
// `steps`, when set, counts the pack's training steps as they are taken (FitOptions::steps).
void train_pack(Model& model, std::span<ModelWorker* const> members, const RunOptions& options,
                const std::atomic<bool>* stop, const MemberProgress& progress, std::atomic<int64_t>* steps = nullptr);

class PackWorker {
 public:
  // pack: its number in the phase, recorded in its members' reports (none: a model alone, streams mode).
  PackWorker(std::vector<ModelWorker*> members, const RunOptions& options, std::optional<int> pack);
  ~PackWorker();  // releases the pack's pool

  // Each member's prepare(), then the model of those prepared and their weights files.
  void build(Backend& backend, DataSets& data);
  // Trains the pack (nothing when no member was prepared); epoch lines go to `progress` by the
  // member's job index; `steps` as train_pack's.
  void train(const std::atomic<bool>* stop, const std::function<void(size_t job, const std::string&)>& progress,
             std::atomic<int64_t>* steps = nullptr);

 private:
  std::vector<ModelWorker*> members_, prepared_;
  const RunOptions& options_;
  std::optional<int> pack_;
  std::unique_ptr<Model> model_;
};

}  // namespace mf
