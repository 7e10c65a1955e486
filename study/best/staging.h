#pragma once
// --save-best's staging folder in DIR: each model that ends ok saves its weights there
// (Job::keep), and the keeper removes those the top K (study/best/top_k.h) drops, so that however
// large the sweep only the best K's files stay (stage() and ended() say what more is there for a
// while). A run over several processes (MPI ranks, shards) has a staging folder and a keeper each.
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "study/best/names.h"
#include "study/best/top_k.h"
#include "study/job.h"
#include "study/report/ranking.h"
#include "study/report/report.h"

namespace mf {

// Before any rank makes its keeper: on `resume`, the weights every other rank's staging folder in
// DIR holds (a killed run's, by any number of ranks) moved into rank 0's, which takes them on
// (BestKeeper's `resume`); either way those folders removed, so that no weights of an earlier run
// come back. Throws SystemError naming a file it cannot move.
void gather_staging(const SaveBest& save, bool resume);

// One process's staging folder and its top K, safe from any thread.
class BestKeeper {
 public:
  // Makes DIR and its staging folder `staging` inside it: an empty one, or on `resume` the one a
  // run killed before left, whose files the resumed models offer back (resumed()). Throws UserError
  // naming the folder when it cannot be made.
  BestKeeper(SaveBest save, std::optional<RankBy> by, const std::string& staging = kStagingFolder,
             bool resume = false);

  const SaveBest& save() const { return save_; }
  const std::string& staging() const { return staging_; }
  // Where a job's worker saves its weights when it ends ok: the staging folder's STEM.weights.
  std::string staging_file(const std::string& name, size_t index) const;
  // Every job's Job::keep set to its staging file, for the run whose models are kept.
  void keep(std::vector<Job>& jobs) const;

  // A model of this process ended ok. When it may be among the best K as things stand, runs `save`
  // (which writes its weights to its staging file) and takes it among the best, removing the files
  // of those it displaces; else nothing (the best only get better as models end, so it would be
  // dropped later). `save` runs under the keeper's lock, so that a file it drops is whole, and
  // before the one it displaces is removed, so that a save that fails loses nothing: what `save`
  // throws is thrown, nothing changed.
  void stage(const ModelReport& report, const std::function<void()>& save);
  // The model's report is final (Progress::ended; a later call for the same model, a corrected
  // report, supersedes the earlier). Its staged file, and any other that can no longer be among
  // the best K, is removed: in processes mode, where the child saves every model that ends ok,
  // at most K files and the models in flight are on disk.
  void ended(const ModelReport& report);
  // A model a resumed run takes from its journal: considered as ended() when its staged file is
  // there (it ended ok in the run that was killed, and its file was kept since), else never among
  // the best.
  void resumed(const ModelReport& report);
  // The models whose files are staged now, by their place in the sweep.
  std::vector<size_t> staged() const;

 private:
  void take(const ModelReport& report);  // mutex_ held

  mutable std::mutex mutex_;  // the training threads stage() while ended() takes models in
  SaveBest save_;
  std::string staging_;  // the staging folder's path
  TopK best_;
};

}  // namespace mf
