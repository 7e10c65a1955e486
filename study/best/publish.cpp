#include "study/best/publish.h"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "runtime/error.h"
#include "runtime/json_forms.h"
#include "runtime/output_file.h"
#include "study/report/ranking.h"
#include "study/sweep/shard.h"

namespace mf {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

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
        if (!name.empty() && name.find('/') == std::string::npos && name != "." && name != "..")
          files.insert(name);
      }
  return files;
}

// STEM.weights moved from the first of the staging folders that has it into DIR: its path there, or
// "" when none has it.
std::string move_weights(const std::vector<std::string>& staging, const fs::path& dir,
                         const std::string& stem) {
  for (const std::string& folder : staging) {
    const fs::path from = fs::path(folder) / (stem + kWeightsSuffix);
    std::error_code error;
    if (!fs::is_regular_file(from, error)) continue;
    const fs::path to = dir / (stem + kWeightsSuffix);
    if (std::rename(from.c_str(), to.c_str()) != 0)
      throw SystemError(to.string() + ": cannot move the weights file there: " +
                        std::generic_category().message(errno));
    return to.string();
  }
  return "";
}

// The job's spec written to DIR/STEM.spec.json, with the data it trained on (--data included), so
// that train --load evaluates the same: the file's name, or "" for a job without a spec.
std::string write_spec(const Job& job, const fs::path& dir, const std::string& stem) {
  if (!job.spec) return "";
  ModelSpec spec = *job.spec;
  spec.data = job.data;
  write_output_file((dir / (stem + kSpecSuffix)).string(), "the spec file",
                    to_json(spec).dump(2) + "\n");
  return stem + kSpecSuffix;
}

// Removes the files of an earlier run's best that are not this one's (`ours`), and the staging
// folders.
void clean_up(const fs::path& dir, const std::set<std::string>& earlier,
              const std::set<std::string>& ours, const std::vector<std::string>& staging) {
  std::error_code error;
  for (const std::string& file : earlier)
    if (!ours.contains(file) && file != kBestIndex) fs::remove(dir / file, error);
  for (const std::string& folder : staging) fs::remove_all(folder, error);
}

}  // namespace

std::vector<BestModel> finish_best(const SaveBest& save, const RunReport& ranked,
                                   const std::vector<Job>& jobs,
                                   const std::vector<std::string>& staging) {
  const fs::path dir = save.dir;
  const std::set<std::string> earlier = files_listed(dir);
  std::unordered_map<std::string, const ModelReport*> by_name;
  for (const ModelReport& m : ranked.models) by_name.emplace(m.name, &m);
  const std::optional<RankBy> by = find_named(kRankByNames, ranked.rank_by);

  std::vector<BestModel> best;
  std::set<std::string> ours;  // this run's best's files, found or not (whatever is there stays)
  nlohmann::ordered_json listed = nlohmann::ordered_json::array();  // keys in the order written
  for (size_t rank = 1; rank <= ranked.ranking.size() && rank <= save.k; ++rank) {
    const std::string& name = ranked.ranking[rank - 1];
    const ModelReport& m = *by_name.at(name);
    const Job& job = *job_at(jobs, m.index);  // jobs may be a part of the sweep (--shard)
    const std::string stem = best_file_stem(name, m.index);
    BestModel model{rank, name, move_weights(staging, dir, stem)};
    const std::string spec = write_spec(job, dir, stem);
    ours.insert(stem + kWeightsSuffix);
    if (!spec.empty()) ours.insert(spec);
    listed.push_back({{"rank", rank},
                      {"name", name},
                      {"index", m.index},
                      {"value", by ? metric_json(rank_value(m, *by)) : json()},
                      {"weights", model.weights.empty() ? json() : json(stem + kWeightsSuffix)},
                      {"spec", spec.empty() ? json() : json(spec)},
                      {"settings", json(m).at("settings")}});  // as the document writes them
    best.push_back(std::move(model));
  }
  const nlohmann::ordered_json index = {
      {"rank_by", ranked.rank_by}, {"k", save.k}, {"mode", ranked.mode}, {"models", listed}};
  write_output_file((dir / kBestIndex).string(), "the index of the best models",
                    index.dump(2) + "\n");
  clean_up(dir, earlier, ours, staging);
  return best;
}

}  // namespace mf
