#include "apps/multifit/pack_worker.h"

#include <algorithm>
#include <optional>

#include "nn/fit.h"
#include "nn/weights.h"

namespace mf {

void train_pack(Model& model, std::span<ModelWorker* const> members, const RunOptions& options,
                const std::atomic<bool>* stop, const MemberProgress& progress) {
  ModelWorker& lead = *members.front();
  const ResidentData& data = *lead.data();  // the members' (their data source is part of the pack's key)
  std::vector<FitResult> fits;
  std::vector<Evaluation> tests;
  bool interrupted = false;
  const bool graphs = use_graphs(options.backend, model.backend());
  for (ModelWorker* member : members) member->report().settings["graphs"] = graphs;
  lead.attempt([&] {
    fits = fit_pack(model, *data.train, {progress, options.timeline, stop, options.calibration_steps, graphs});
    interrupted = stop && *stop;
    const bool any_ok = std::any_of(fits.begin(), fits.end(), [](const FitResult& f) { return f.status == FitStatus::ok; });
    if (data.test && options.calibration_steps == 0 && any_ok)
      tests = evaluate_pack(model, *data.test, 0, data.test->rows());
  });
  for (ModelWorker* member : members) member->share_failure(lead);
  for (size_t z = 0; z < fits.size(); ++z)
    members[z]->finish(fits[z], interrupted, tests.empty() ? std::nullopt : std::optional(tests[z]), model, int(z));
}

PackWorker::PackWorker(std::vector<ModelWorker*> members, const RunOptions& options, std::optional<int> pack)
    : members_(std::move(members)), options_(options), pack_(pack) {}

PackWorker::~PackWorker() = default;

void PackWorker::build(Backend& backend, DataSets& data) {
  for (ModelWorker* member : members_) member->prepare(backend, data);
  for (ModelWorker* member : members_)
    if (member->ok()) prepared_.push_back(member);
  if (prepared_.empty()) return;
  ModelWorker& lead = *prepared_.front();
  lead.attempt([&] {
    std::vector<ModelSpec> specs;
    for (ModelWorker* member : prepared_) specs.push_back(*member->job().spec);
    model_ = std::make_unique<Model>(std::move(specs), backend);
    for (size_t z = 0; z < prepared_.size(); ++z)
      if (!prepared_[z]->job().load.empty()) load_weights(*model_, prepared_[z]->job().load, int(z));
    backend.synchronize();
  });
  for (ModelWorker* member : prepared_) {
    member->share_failure(lead);
    member->end_startup();
    if (pack_) member->report().pack = *pack_, member->report().pack_members = int(prepared_.size());
  }
  if (!lead.ok()) model_.reset();
}

void PackWorker::train(const std::atomic<bool>* stop,
                       const std::function<void(size_t job, const std::string&)>& progress) {
  if (!model_) return;
  train_pack(*model_, prepared_, options_, stop,
             [&](int member, const std::string& line) { progress(prepared_[size_t(member)]->job().index, line); });
}

}  // namespace mf
