#include "apps/multifit/run_messages.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "study/model_worker.h"
#include "runtime/names.h"

namespace mf {

void print_errors(const std::vector<RunReport>& runs) {
  std::vector<std::string> errors;                         // in the order first met
  std::map<std::string, std::vector<std::string>> models;  // by error, each model once
  for (const RunReport& run : runs)
    for (const ModelReport& m : run.models) {
      // a trial that lost is no error
      if (m.status == ModelStatus::ok || m.status == ModelStatus::stopped) continue;
      std::vector<std::string>& names = models[m.error];
      if (names.empty()) errors.push_back(m.error);
      if (std::find(names.begin(), names.end(), m.name) == names.end()) names.push_back(m.name);
    }
  for (const std::string& error : errors) {
    const std::vector<std::string>& names = models[error];
    const std::string& first = names.front();
    const bool named = error.starts_with(first + ":") || error.starts_with("model '" + first + "'");
    const std::string who =
        names.size() > 1 ? std::to_string(names.size()) + " models (" + first + " and others): "
        : named          ? ""
                         : first + ": ";
    std::fprintf(stderr, "multifit: error: %s%s\n", who.c_str(), error.c_str());
  }
}

void print_resume_note(const std::vector<RunReport>& runs, const std::string& journal) {
  std::set<std::string> unfinished;
  for (const RunReport& run : runs)
    for (const ModelReport& m : run.models)
      if (m.status == ModelStatus::failed &&
          (m.error.starts_with(kNotStarted) || m.error.starts_with(kInterrupted)))
        unfinished.insert(m.name);
  if (unfinished.empty()) return;
  const std::string n =
      std::to_string(unfinished.size()) + (unfinished.size() == 1 ? " model" : " models");
  if (!journal.empty())
    std::fprintf(
        stderr,
        "multifit: note: the run was interrupted with %s unfinished: the same command with --resume trains them, keeping what %s recorded\n",
        n.c_str(), journal.c_str());
  else
    std::fprintf(
        stderr,
        "multifit: note: the run was interrupted with %s unfinished; it kept no journal to resume from: a run with --json OUT (or --journal PATH) keeps one\n",
        n.c_str());
}

int save_best_models(const BestKeeper& keeper, const std::vector<std::string>& staging,
                     const RunReport& run, const std::vector<Job>& jobs, bool resumed) {
  const SaveBest& save = keeper.save();
  const std::string named = "--save-best " + std::to_string(save.k) + " " + save.dir;
  std::vector<BestModel> best;
  try {
    best = finish_best(save, run, jobs, staging);
  } catch (const SystemError& e) {
    std::fprintf(stderr, "multifit: error: %s: %s\n", named.c_str(), e.what());
    return 1;
  }
  if (best.empty()) {
    const bool any_ok = std::any_of(run.models.begin(), run.models.end(), [](const ModelReport& m) {
      return m.status == ModelStatus::ok;
    });
    std::fprintf(stderr, "multifit: error: %s: %s, so none was kept\n", named.c_str(),
                 any_ok ? ("no model has a value of " + run.rank_by).c_str() : "no model ended ok");
    return any_ok ? 2 : 0;  // with none ok, the models' own errors say why
  }
  std::vector<std::string> missing;
  for (const BestModel& m : best)
    if (m.weights.empty()) missing.push_back(m.name + " (rank " + std::to_string(m.rank) + ")");
  if (!missing.empty()) {
    std::fprintf(
        stderr,
        "multifit: error: %s: the weights of %s were not kept: %s; %s lists them without weights\n",
        named.c_str(), joined(missing).c_str(),
        resumed
            ? "they ended in the run that --resume finishes, whose staging folder did not hold them"
            : "the staging folder did not hold them",
        kBestIndex);
    return 1;
  }
  std::fprintf(stderr, "multifit: the best %zu by %s are in %s (%s names them)%s\n", best.size(),
               run.rank_by.c_str(), save.dir.c_str(), kBestIndex,
               best.size() < save.k ? (", all that have a value of " + run.rank_by).c_str() : "");
  return 0;
}

}  // namespace mf
