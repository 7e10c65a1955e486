#pragma once
// --save-best K DIR: the weights of a run's best K models by its ranking (study/report/ranking.h),
// without every model's weights on disk or in memory at once, however large the sweep.
//
// Each model that ends ok saves its weights, as `train --save` writes them (nn/weights.h), into a
// staging folder inside DIR (Job::keep). In the keeper's process the keeper does the saving
// (stage()): only for a model that may be among the best, and under its lock, so that a file it
// drops is whole; there at most K files per metric the ranking may still use are on disk (one
// metric once a model shows which), and one more for the moment a new one is written before the one
// it displaces is removed (so that a save that fails loses nothing). In processes mode the child has the weights and
// saves them whenever its model ends ok, and the keeper drops what it need not keep as each model's
// report comes (ended()): at most K plus the models in flight. At the end finish_best() moves the best K of the final ranking into
// DIR, each beside its spec, writes the index DIR/best.json and removes the staging folders.
//
// The keeper ranks with rank_key, the function rank_run ranks the document with. Without --rank-by
// the metric is the first that some model has (rank_run's default), which is known only once a model
// has it; until then the keeper keeps the best K by each metric the default may still choose (the
// default can only move towards the front of kRankByNames as models end, so a metric behind the
// earliest some model has is dropped, with its files).
//
// A run over several processes (MPI ranks, shards): each keeps its own best K in a staging folder of
// its own (BestKeeper's `staging` name), and one process, once it holds every process's reports and
// has ranked them, calls finish_best() with all the staging folders: the best K of the whole run are
// each among their process's best K, so among the union.
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "study/job.h"
#include "study/report/ranking.h"
#include "study/report/report.h"

namespace mf {

struct SaveBest {
  size_t k = 0;     // keep this many, 1 or more
  std::string dir;  // in this folder, made when missing (its parent must exist)
};

// The staging folder of a run in one process (or of MPI rank 0), inside DIR.
inline constexpr const char* kStagingFolder = ".staging";
// MPI rank r's staging folder inside DIR: kStagingFolder, then ".rank-r" for a rank other than 0.
std::string staging_folder(int rank);
// Before any rank makes its keeper: on `resume`, the weights every other rank's staging folder in
// DIR holds (a killed run's, by any number of ranks) moved into rank 0's, which takes them on
// (BestKeeper's `resume`); either way those folders removed, so that no weights of an earlier run
// come back. Throws SystemError naming a file it cannot move.
void gather_staging(const SaveBest& save, bool resume);
// The index of the models kept, in DIR.
inline constexpr const char* kBestIndex = "best.json";

// The name of a model's files in DIR, before ".weights" and ".spec.json": the model's name where it is
// a plain file name (letters, digits, '.', '_', '-', '+', '=', not starting with '.'), else the name
// with every other byte written %XX; a stem longer than 200 bytes so is cut to 180 and ends ~INDEX
// (its place in the sweep). No two models of a sweep get the same stem, and no model's files are
// named .staging or best.json.
std::string best_file_stem(const std::string& name, size_t index);

// Before anything trains: DIR is a folder that exists and is writable or can be made in a folder
// that exists, and when `by` is given some model of the sweep can have a value of it (validation
// rows for val_*, an accuracy metric for *_accuracy, a data source with a test set for test_*).
// Throws UserError naming --save-best, the value and what is allowed.
void check_save_best_dir(const SaveBest& save);
void check_save_best_metric(const std::vector<Job>& jobs, std::optional<RankBy> by);

class BestKeeper {
 public:
  // Makes DIR and its staging folder `staging` inside it: an empty one, or on `resume` the one a run
  // killed before left, whose files the resumed models offer back (resumed()). Throws SystemError
  // naming the folder when it cannot be made.
  BestKeeper(SaveBest save, std::optional<RankBy> by, const std::string& staging = kStagingFolder,
             bool resume = false);

  const SaveBest& save() const { return save_; }
  const std::string& staging() const { return staging_; }
  // Where a job's worker saves its weights when it ends ok: the staging folder's STEM.weights.
  std::string staging_file(const std::string& name, size_t index) const;
  // Every job's Job::keep set to its staging file, for the run whose models are kept.
  void keep(std::vector<Job>& jobs) const;

  // A model of this process ended ok: when it may be among the best K as things stand (some metric
  // the ranking may still use has fewer than K better), runs `save`, which writes its weights to
  // its staging file, and takes it among the best, dropping the files of those it displaces; else
  // nothing (the best only get better as models end, so it would be dropped later). Safe from any
  // thread; `save` runs under the keeper's lock. What `save` throws is thrown, nothing changed.
  void stage(const ModelReport& report, const std::function<void()>& save);
  // The model's report is final (Progress::ended, one call at a time; a later call for the same model,
  // a corrected report, supersedes the earlier). Its staged file, and any other that can no longer be
  // among the best K, is removed.
  void ended(const ModelReport& report);
  // A model a resumed run takes from its journal: considered as ended() when its staged file is there
  // (it ended ok in the run that was killed, and its file was kept since), else never among the best.
  void resumed(const ModelReport& report);
  // The models whose files are staged now, by their place in the sweep.
  std::vector<size_t> staged() const;

 private:
  void hold(RankBy by, const RankKey& key, const std::string& file, std::vector<size_t>& released);
  void release(const std::vector<size_t>& indices);

  bool admits(const ModelReport& report) const;  // mutex_ held
  void narrow(const ModelReport& report, std::vector<size_t>& released);  // mutex_ held

  mutable std::mutex mutex_;  // the training threads stage() while ended() takes models in
  SaveBest save_;
  std::optional<RankBy> by_;                  // --rank-by; absent: rank_run's default
  std::optional<RankBy> earliest_;            // without by_: the earliest metric some model has had so far
  std::string staging_;                       // the staging folder's path
  std::map<RankBy, std::set<RankKey>> best_;  // per metric still possible, its best K so far
  std::map<size_t, std::pair<int, std::string>> held_;  // per staged model: how many best_ hold it, its file
};

// One model of the best K as finish_best() left it.
struct BestModel {
  size_t rank = 0;       // 1 for the best
  std::string name;
  std::string weights;   // its weights file in DIR; "" when no staging folder had it
};

// Finishes --save-best for a run that `ranked` reports, ranked by rank_run over all its models (a
// run over several processes: every process's): the first K of ranked.ranking, each found in one of
// `staging` (each process's staging folder), are moved into DIR as STEM.weights beside STEM.spec.json
// (its job's spec, overrides applied, with the data it trained on: what `train --load` needs), and
// DIR/best.json lists them (rank, name, the metric's value, the files, the settings). Files an earlier
// best.json in DIR listed and this one does not are removed; the staging folders are removed. `jobs`
// are the sweep's (make_jobs), by index. Returns the models in rank order; a model whose file no
// staging folder had is listed with no weights (the caller says so). Throws SystemError when a
// file cannot be written.
std::vector<BestModel> finish_best(const SaveBest& save, const RunReport& ranked, const std::vector<Job>& jobs,
                                   const std::vector<std::string>& staging);

}  // namespace mf
