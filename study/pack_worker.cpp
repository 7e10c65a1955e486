#include "study/pack_worker.h"

#include <algorithm>
#include <optional>

#include "nn/epoch_iterator.h"
#include "nn/fit.h"
#include "nn/weights.h"

namespace mf {
namespace {

// The member that runs the pack's shared stages: the first still ok, or null.
ModelWorker* lead_of(std::span<ModelWorker* const> members) {
  const auto ok = std::find_if(members.begin(), members.end(), [](const ModelWorker* m) { return m->ok(); });
  return ok == members.end() ? nullptr : *ok;
}

}  // namespace

void train_pack(Model& model, std::span<ModelWorker* const> members, const RunOptions& options,
                const std::atomic<bool>* stop, const MemberProgress& progress, std::atomic<int64_t>* steps) {
  ModelWorker* lead = lead_of(members);
  if (!lead) return;
  const ResidentData& data = *lead->data();  // the members' (their data source is part of the pack's key)
  std::vector<FitResult> fits;
  std::vector<Evaluation> tests;
  bool interrupted = false;
  const bool graphs = use_graphs(options.backend, model.backend());
  for (ModelWorker* member : members)
    if (member->report().settings) member->report().settings->graphs = graphs;
  lead->attempt([&] {
    fits = fit_pack(model, *data.train, {progress, options.timeline, stop, options.calibration_steps, graphs, steps});
    interrupted = stop && *stop;
    const bool any_ok = std::any_of(fits.begin(), fits.end(), [](const FitResult& f) { return f.status == FitStatus::ok; });
    if (data.test && options.calibration_steps == 0 && any_ok)
      tests = evaluate_pack(model, *data.test, 0, data.test->rows());
  });
  for (ModelWorker* member : members) member->share_failure(*lead);
  for (size_t z = 0; z < fits.size(); ++z)  // a member that failed before (its weights file) stays failed
    members[z]->finish(fits[z], interrupted, tests.empty() ? std::nullopt : std::optional(tests[z]), model, int(z));
}

PackWorker::PackWorker(std::vector<ModelWorker*> members, const RunOptions& options, std::optional<int> pack)
    : members_(std::move(members)), options_(options), pack_(pack) {}

PackWorker::~PackWorker() = default;

void PackWorker::build(Backend& backend, DataSets& data) {
  for (ModelWorker* member : members_) member->prepare(backend, data);
  for (ModelWorker* member : members_)
    if (member->ok()) prepared_.push_back(member);
  ModelWorker* lead = lead_of(prepared_);
  if (!lead) return;
  lead->attempt([&] {
    std::vector<ModelSpec> specs;
    for (ModelWorker* member : prepared_) specs.push_back(*member->job().spec);
    model_ = std::make_unique<Model>(std::move(specs), backend);
    // fit's batches come from the same pool: taken from the device now, before the start barrier, so
    // that no cudaMalloc happens while other models train (the pool keeps what it took).
    MemoryPool& pool = model_->pool();
    const size_t batches = EpochIterator::plan(model_->spec(), lead->report().train_rows).total();
    pool.deallocate(pool.allocate(batches * prepared_.size()));
  });
  for (ModelWorker* member : prepared_) member->share_failure(*lead);
  if (!model_) return;
  for (size_t z = 0; z < prepared_.size(); ++z) {  // a weights file that does not fit fails its model alone
    ModelWorker& member = *prepared_[z];
    if (!member.job().load.empty()) member.attempt([&] { load_weights(*model_, member.job().load, int(z)); });
  }
  lead->attempt([&] { backend.synchronize(); });
  for (ModelWorker* member : prepared_) {
    member->share_failure(*lead);
    member->end_startup();
    if (pack_) member->report().pack = *pack_, member->report().pack_members = int(prepared_.size());
  }
}

void PackWorker::train(const std::atomic<bool>* stop,
                       const std::function<void(size_t job, const std::string&)>& progress,
                       std::atomic<int64_t>* steps) {
  if (!model_) return;
  train_pack(
      *model_, prepared_, options_, stop,
      [&](int member, const std::string& line) { progress(prepared_[size_t(member)]->job().index, line); }, steps);
}

}  // namespace mf
