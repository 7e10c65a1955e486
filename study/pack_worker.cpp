#include "study/pack_worker.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "nn/fit.h"
#include "nn/weights.h"

namespace mf {
namespace {

// The member that runs the pack's shared stages: the first still ok, or null.
ModelWorker* lead_of(std::span<ModelWorker* const> members) {
  const auto ok =
      std::find_if(members.begin(), members.end(), [](const ModelWorker* m) { return m->ok(); });
  return ok == members.end() ? nullptr : *ok;
}

}  // namespace

PackWorker::PackWorker(std::vector<ModelWorker*> members, const RunOptions& options,
                       std::optional<PackPlace> pack, TrainingWatch watch)
    : members_(std::move(members)), options_(options), pack_(pack), watch_(std::move(watch)) {}

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
    // The pack's input pipeline (one, its members share its settings) counts against its threads.
    backend.reserve_host_threads(specs.front().pipeline_threads());
    model_ = std::make_unique<Model>(std::move(specs), backend);
  });
  for (ModelWorker* member : prepared_) member->share_failure(*lead);
  if (!model_) return;
  for (size_t z = 0; z < prepared_.size();
       ++z) {  // a weights file that does not fit fails its model alone
    ModelWorker& member = *prepared_[z];
    if (!member.job().load.empty())
      member.attempt([&] { load_weights(*model_, member.job().load, int(z)); });
  }
  // The fit takes its batches from the pool now, before the start barrier, so that no cudaMalloc
  // happens while other models train; its warm-up, where it pays (Backend::warm_up_pays), leaves
  // the weights just loaded as they are.
  const bool graphs = use_graphs(options_.backend, backend);
  const auto line = [this](int member, const std::string& text) {
    if (watch_.progress) watch_.progress(prepared_[size_t(member)]->job().index, text);
  };
  for (ModelWorker* member : prepared_)
    if (TrainingSettings* settings =
            member->report().settings ? &*member->report().settings : nullptr) {
      settings->graphs = graphs;
      if (backend.host_threads() > 0) settings->threads = backend.host_threads();
    }
  attempt([&] {
    std::vector<size_t> trials;
    for (const ModelWorker* member : prepared_) trials.push_back(member->job().index);
    FitOptions fit;
    fit.progress = line, fit.timeline = options_.timeline, fit.stop = watch_.stop;
    fit.max_steps = options_.calibration_steps, fit.graphs = graphs, fit.steps = watch_.steps;
    fit.rungs = watch_.rungs, fit.trials = std::move(trials);
    fit_ = std::make_unique<PackFit>(*model_, *lead_of(prepared_)->data()->train, fit);
    if (backend.warm_up_pays()) fit_->warm_up();
  });
  faults_ = std::any_of(prepared_.begin(), prepared_.end(), [&](const ModelWorker* member) {
    return !options_.inject_fault.empty() && member->job().name == options_.inject_fault;
  });
  for (size_t z = 0; z < prepared_.size(); ++z) {
    ModelWorker& member = *prepared_[z];
    member.end_startup();
    // Its pool as built, which its finish measures again: a processes-mode worker that dies in
    // training leaves this much (protocol.h's ready line).
    member.report().memory = model_->member_share(int(z));
    if (pack_) {
      member.report().pack = pack_->number, member.report().pack_members = int(prepared_.size());
      member.report().pack_boundary = pack_->boundary;
    }
  }
}

void PackWorker::begin_training() {
  if (fit_ && fit_->done()) finish_training();  // no epochs to train (--epochs 0)
}

void PackWorker::launch_epoch() {
  attempt([&] { fit_->launch_epoch(); });
}

void PackWorker::settle(double timeout_s) {
  attempt([&] { fit_->settle(timeout_s); });
  if (fit_ && fit_->done()) finish_training();
}

void PackWorker::end_epoch() {
  attempt([&] { fit_->end_epoch(); });
  if (fit_ && faults_) {  // --inject-fault: after the first epoch, once
    faults_ = false;
    std::fprintf(stderr, "multifit: --inject-fault: %s faults now, after its first epoch (%s)\n",
                 options_.inject_fault.c_str(),
                 model_->backend().name() == "cpu"
                     ? "SIGSEGV: the process ends"
                     : "a write to an illegal address: the CUDA context is poisoned");
    attempt([&] { model_->backend().inject_fault(); });
  }
  if (fit_ && fit_->done()) finish_training();
}

void PackWorker::train() {
  begin_training();
  train_epochs(*this);
}

// The shared stages change no member's status (finish does, after them), so the lead fails only
// when the stage threw.
void PackWorker::attempt(const std::function<void()>& stage) {
  ModelWorker* lead = lead_of(prepared_);
  if (lead) lead->attempt(stage);
  if (lead && !lead->failed()) return;
  for (ModelWorker* member : prepared_)
    if (lead) member->share_failure(*lead);
  fit_.reset();
}

// The test set where a member is still ok (not after a calibration's few steps), then each member's
// finish with its own results.
void PackWorker::finish_training() {
  std::vector<FitResult> fits = fit_->take_results();
  fit_.reset();
  // the members' (their data source is in the pack's key)
  const ResidentData& data = *lead_of(prepared_)->data();
  const bool interrupted = watch_.stop && *watch_.stop;
  const bool any_ok = std::any_of(fits.begin(), fits.end(),
                                  [](const FitResult& f) { return f.status == FitStatus::ok; });
  std::vector<Evaluation> tests;
  if (data.test && options_.calibration_steps == 0 && any_ok)
    attempt([&] { tests = evaluate_pack(*model_, *data.test, 0, data.test->rows()); });
  for (size_t z = 0; z < fits.size();
       ++z)  // a member that failed before (its weights file) stays failed
    prepared_[z]->finish(fits[z], interrupted,
                         tests.empty() ? std::nullopt : std::optional(tests[z]), *model_, int(z));
}

}  // namespace mf
