#include "study/best_keeper.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <unordered_map>

#include "data/dataset.h"
#include "runtime/error.h"
#include "runtime/json_forms.h"
#include "runtime/output_file.h"
#include "study/shard.h"

namespace mf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kLongestStem = 200;  // a file name may have 255 bytes; the suffixes need the rest

constexpr const char* kWeightsSuffix = ".weights";
constexpr const char* kSpecSuffix = ".spec.json";

bool plain_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-' || c == '+' || c == '=';
}

std::string os_reason(int error) { return std::generic_category().message(error); }

// Whether the job's model, once trained, can have a value of `by`.
bool can_have(const Job& job, RankBy by) {
  if (!job.spec) return false;
  const ModelSpec& spec = *job.spec;
  const bool accuracy = spec.has_accuracy(), validation = spec.fit.validation_split > 0;
  switch (by) {
    case RankBy::val_accuracy: return validation && accuracy;
    case RankBy::val_loss: return validation;
    case RankBy::test_accuracy: return has_test_set(job.data) && accuracy;
    case RankBy::test_loss: return has_test_set(job.data);
    case RankBy::train_s: return true;
  }
  return false;
}

// What a model needs to have `by`, in the words of the spec, for the error that none can.
const char* needs(RankBy by) {
  switch (by) {
    case RankBy::val_accuracy: return "validation rows (fit.validation_split above 0) and an accuracy metric";
    case RankBy::val_loss: return "validation rows (fit.validation_split above 0)";
    case RankBy::test_accuracy: return "a test set (every data source but csv:TRAIN has one) and an accuracy metric";
    case RankBy::test_loss: return "a test set (every data source but csv:TRAIN has one)";
    case RankBy::train_s: return "a spec that could be read";
  }
  return "";
}

// The files an earlier best.json in `dir` lists (plain names only: nothing outside DIR is touched),
// none when there is none or it cannot be read.
std::set<std::string> files_listed(const fs::path& dir) {
  std::set<std::string> files;
  std::ifstream in(dir / kBestIndex);
  if (!in) return files;
  const json index = json::parse(in, nullptr, false);
  if (!index.is_object() || !index.contains("models") || !index["models"].is_array()) return files;
  for (const json& m : index["models"])
    for (const char* key : {"weights", "spec"})
      if (m.is_object() && m.contains(key) && m[key].is_string()) {
        const std::string name = m[key];
        if (!name.empty() && name.find('/') == std::string::npos && name != "." && name != "..") files.insert(name);
      }
  return files;
}

}  // namespace

std::string best_file_stem(const std::string& name, size_t index) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string stem;
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (plain_byte(c) && !(i == 0 && c == '.')) {
      stem += char(c);
    } else {
      stem += '%';
      stem += kHex[c >> 4];
      stem += kHex[c & 15];
    }
  }
  if (stem.empty()) stem = "%";  // an empty name (no sweep has one, but the stem must be a name)
  // The cut may split a %XX; the ~ that follows, never written otherwise, keeps the stem apart from
  // every whole one, and the index from every other cut one.
  if (stem.size() > kLongestStem) stem = stem.substr(0, 180) + "~" + std::to_string(index);
  return stem;
}

void check_save_best_dir(const SaveBest& save) {
  const std::string named = "--save-best " + std::to_string(save.k) + " " + save.dir;
  std::error_code error;
  const fs::file_status status = fs::status(save.dir, error);
  if (fs::exists(status) && !fs::is_directory(status))
    throw UserError(named + ": is a file, not a folder; give a folder for the best models' files (it is made when "
                            "it does not exist)");
  const fs::path folder = fs::exists(status) ? fs::path(save.dir) : fs::absolute(save.dir, error).parent_path();
  if (!fs::exists(status) && !fs::is_directory(folder, error))
    throw UserError(named + ": the folder " + folder.string() + " does not exist, so " + save.dir +
                    " cannot be made in it");
  if (access(folder.c_str(), W_OK | X_OK) != 0)
    throw UserError(named + ": the folder " + folder.string() + " is not writable (" + os_reason(errno) + ")");
}

void check_save_best_metric(const std::vector<Job>& jobs, std::optional<RankBy> by) {
  if (!by) return;  // the default is a metric some model has, if any ends ok
  if (std::any_of(jobs.begin(), jobs.end(), [&](const Job& job) { return can_have(job, *by); })) return;
  throw UserError(std::string("--save-best with --rank-by ") + to_string(*by) + ": no model of the sweep can have " +
                  to_string(*by) + ", which needs " + needs(*by) + "; rank by another metric, or leave --rank-by out");
}

BestKeeper::BestKeeper(SaveBest save, std::optional<RankBy> by, const std::string& staging, bool resume)
    : save_(std::move(save)), by_(by), staging_((fs::path(save_.dir) / staging).string()) {
  std::error_code error;
  fs::create_directory(save_.dir, error);
  // Where the folder cannot be made (a read-only or special file system), the user picks another.
  if (error) throw UserError("--save-best " + save_.dir + ": cannot make the folder: " + error.message() +
                             "; give a folder where this user may write");
  if (!resume) fs::remove_all(staging_, error);  // a run killed before left it: its files are of no use now
  fs::create_directory(staging_, error);
  if (error || !fs::is_directory(staging_))
    throw UserError("--save-best " + save_.dir + ": cannot make the staging folder " + staging_ + ": " +
                    (error ? error.message() : "something else is there") + "; give a folder where this user may write");
  if (by_) best_[*by_];
  else
    for (const Named<RankBy>& metric : kRankByNames) best_[metric.value];
}

std::string staging_folder(int rank) {
  return rank == 0 ? kStagingFolder : std::string(kStagingFolder) + ".rank-" + std::to_string(rank);
}

void gather_staging(const SaveBest& save, bool resume) {
  const fs::path into = fs::path(save.dir) / kStagingFolder;
  const std::string prefix = std::string(kStagingFolder) + ".rank-";
  std::error_code error;
  for (const fs::directory_entry& folder : fs::directory_iterator(save.dir, error)) {
    if (!folder.is_directory() || !folder.path().filename().string().starts_with(prefix)) continue;
    if (resume) fs::create_directory(into, error);
    for (const fs::directory_entry& file : fs::directory_iterator(folder.path(), error)) {
      if (!resume) break;
      const fs::path to = into / file.path().filename();
      if (std::rename(file.path().c_str(), to.c_str()) != 0)
        throw SystemError(to.string() + ": cannot move a rank's staged weights there: " + os_reason(errno));
    }
    fs::remove_all(folder.path(), error);
  }
}

std::string BestKeeper::staging_file(const std::string& name, size_t index) const {
  return (fs::path(staging_) / (best_file_stem(name, index) + kWeightsSuffix)).string();
}

void BestKeeper::keep(std::vector<Job>& jobs) const {
  for (Job& job : jobs) job.keep = staging_file(job.name, job.index);
}

std::vector<size_t> BestKeeper::staged() const {
  std::lock_guard lock(mutex_);
  std::vector<size_t> indices;
  for (const auto& [index, held] : held_) indices.push_back(index);
  return indices;
}

void BestKeeper::hold(RankBy by, const RankKey& key, const std::string& file, std::vector<size_t>& released) {
  std::set<RankKey>& best = best_[by];
  best.insert(key);
  std::pair<int, std::string>& held = held_[key.second];
  ++held.first;
  held.second = file;
  if (best.size() <= save_.k) return;
  const RankKey last = *std::prev(best.end());  // no longer among the best K of this metric
  best.erase(std::prev(best.end()));
  --held_[last.second].first;
  released.push_back(last.second);
}

// Removes the files of those of `indices` that no metric holds now.
void BestKeeper::release(const std::vector<size_t>& indices) {
  for (size_t index : indices) {
    const auto held = held_.find(index);
    if (held == held_.end() || held->second.first > 0) continue;
    std::error_code error;
    fs::remove(held->second.second, error);  // one left behind goes with the staging folder at the end
    held_.erase(held);
  }
}

// Whether the model would be among the best K of some metric still possible.
bool BestKeeper::admits(const ModelReport& report) const {
  if (!by_)  // the first model with a metric no model had before is the best of it
    if (const std::optional<RankBy> first = first_rank_by(report); first && (!earliest_ || *first < *earliest_))
      return true;
  for (const auto& [by, best] : best_)
    if (const std::optional<RankKey> key = rank_key(report, by); key && (best.size() < save_.k || *key < *best.rbegin()))
      return true;
  return false;
}

void BestKeeper::stage(const ModelReport& report, const std::function<void()>& save) {
  std::lock_guard lock(mutex_);
  if (report.status != ModelStatus::ok || !admits(report)) return;
  save();
  const std::string file = staging_file(report.name, report.index);
  std::vector<size_t> released = {report.index};
  // Its report may yet be corrected (a poisoned context fails every model of the process), but then
  // so are all the others', and nothing is to be kept.
  narrow(report, released);
  for (const auto& [by, best] : best_)
    if (const std::optional<RankKey> key = rank_key(report, by); key && !best.contains(*key))
      hold(by, *key, file, released);
  release(released);
}

void BestKeeper::ended(const ModelReport& report) {
  std::lock_guard lock(mutex_);
  std::vector<size_t> released = {report.index};
  // A corrected report supersedes the earlier: the model leaves every metric's best first.
  for (auto& [by, best] : best_)
    for (auto key = best.begin(); key != best.end();)
      if (key->second == report.index) {
        --held_[report.index].first;
        key = best.erase(key);
      } else {
        ++key;
      }
  const std::string file = staging_file(report.name, report.index);
  held_[report.index].second = file;  // its file, held or not, is released below unless a metric holds it
  narrow(report, released);
  for (const auto& [by, best] : best_)
    if (const std::optional<RankKey> key = rank_key(report, by)) hold(by, *key, file, released);
  release(released);
}

// Without --rank-by, the default cannot be a metric behind the earliest this model has: those
// metrics, and the files only they held, go.
void BestKeeper::narrow(const ModelReport& report, std::vector<size_t>& released) {
  const std::optional<RankBy> first = first_rank_by(report);
  if (by_ || !first || (earliest_ && *first >= *earliest_)) return;
  earliest_ = first;
  for (auto it = best_.begin(); it != best_.end();) {
    if (it->first <= *earliest_) {
      ++it;
      continue;
    }
    for (const RankKey& key : it->second) {
      --held_[key.second].first;
      released.push_back(key.second);
    }
    it = best_.erase(it);
  }
}

void BestKeeper::resumed(const ModelReport& report) {
  std::error_code error;
  if (fs::is_regular_file(staging_file(report.name, report.index), error)) ended(report);
}

std::vector<BestModel> finish_best(const SaveBest& save, const RunReport& ranked, const std::vector<Job>& jobs,
                                   const std::vector<std::string>& staging) {
  const fs::path dir = save.dir;
  const std::set<std::string> earlier = files_listed(dir);
  std::unordered_map<std::string, const ModelReport*> by_name;
  for (const ModelReport& m : ranked.models) by_name.emplace(m.name, &m);
  const std::optional<RankBy> by = find_named(kRankByNames, ranked.rank_by);

  std::vector<BestModel> best;
  std::set<std::string> ours;  // the files of this run's best, and an earlier one's of a model whose weights were not found
  nlohmann::ordered_json listed = nlohmann::ordered_json::array();  // each entry's keys in the order written
  for (size_t rank = 1; rank <= ranked.ranking.size() && rank <= save.k; ++rank) {
    const std::string& name = ranked.ranking[rank - 1];
    const ModelReport& m = *by_name.at(name);
    const Job& job = *job_at(jobs, m.index);  // jobs may be a part of the sweep (--shard)
    const std::string stem = best_file_stem(name, m.index);
    BestModel model{rank, name, ""};
    for (const std::string& folder : staging) {
      const fs::path from = fs::path(folder) / (stem + kWeightsSuffix);
      std::error_code error;
      if (!fs::is_regular_file(from, error)) continue;
      const fs::path to = dir / (stem + kWeightsSuffix);
      if (std::rename(from.c_str(), to.c_str()) != 0)
        throw SystemError(to.string() + ": cannot move the weights file there: " + os_reason(errno));
      model.weights = to.string();
      ours.insert(to.filename().string());
      break;
    }
    if (model.weights.empty()) ours.insert(stem + kWeightsSuffix);  // whatever is there is not removed
    nlohmann::ordered_json entry = {{"rank", rank},
                  {"name", name},
                  {"index", m.index},
                  {"value", by ? metric_json(rank_value(m, *by)) : json()},
                  {"weights", model.weights.empty() ? json() : json(stem + kWeightsSuffix)},
                  {"spec", json()},
                  {"settings", json(m).at("settings")}};  // as the document writes them
    if (job.spec) {
      ModelSpec spec = *job.spec;
      spec.data = job.data;  // what it trained on (--data included), so that train --load evaluates the same
      write_output_file((dir / (stem + kSpecSuffix)).string(), "the spec file", to_json(spec).dump(2) + "\n");
      entry["spec"] = stem + kSpecSuffix;
      ours.insert(stem + kSpecSuffix);
    }
    listed.push_back(std::move(entry));
    best.push_back(std::move(model));
  }
  const nlohmann::ordered_json index = {
      {"rank_by", ranked.rank_by}, {"k", save.k}, {"mode", ranked.mode}, {"models", listed}};
  write_output_file((dir / kBestIndex).string(), "the index of the best models", index.dump(2) + "\n");
  for (const std::string& file : earlier)  // an earlier run's best, not this one's
    if (!ours.contains(file) && file != kBestIndex) {
      std::error_code error;
      fs::remove(dir / file, error);
    }
  for (const std::string& folder : staging) {
    std::error_code error;
    fs::remove_all(folder, error);
  }
  return best;
}

}  // namespace mf
