#include "study/rank_journals.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "runtime/error.h"

namespace mf {

namespace fs = std::filesystem;

std::string rank_journal_path(const std::string& path, int rank) {
  return rank == 0 ? path : path + ".rank-" + std::to_string(rank);
}

std::vector<std::string> rank_journals_beside(const std::string& path) {
  const fs::path file(path);
  const fs::path folder = file.has_parent_path() ? file.parent_path() : fs::path(".");
  const std::string prefix = file.filename().string() + ".rank-";
  std::vector<std::pair<int, std::string>> found;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const std::string number = name.substr(prefix.size());
    if (number.empty() || number.size() > 9 ||
        !std::all_of(number.begin(), number.end(), [](unsigned char c) { return std::isdigit(c); }))
      continue;
    const int rank = std::stoi(number);
    if (rank > 0) found.push_back({rank, rank_journal_path(path, rank)});
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> paths;
  for (auto& [rank, p] : found) paths.push_back(std::move(p));
  return paths;
}

JournalContents read_with_rank_journals(const std::string& path, const std::vector<Job>& jobs, const JournalRun& run,
                                        EndedModels* others) {
  JournalContents own = read_journal(path, jobs, run);
  for (const std::string& rank_path : rank_journals_beside(path)) {
    const JournalContents theirs = read_journal(rank_path, jobs, run);
    for (const auto& [mode, ended] : theirs.ended)
      for (const auto& [index, model] : ended)
        if (!own.ended[mode].contains(index)) (*others)[mode][index] = model;
  }
  std::erase_if(own.ended, [](const auto& mode) { return mode.second.empty(); });
  return own;
}

void set_aside_rank_journals(const std::string& path, int from) {
  for (const std::string& rank_path : rank_journals_beside(path)) {
    const int rank = std::stoi(rank_path.substr(rank_path.rfind('-') + 1));
    if (rank < from) continue;
    const std::string previous = rank_path + ".previous";
    if (std::rename(rank_path.c_str(), previous.c_str()) != 0)
      throw SystemError(rank_path + ": cannot set aside an earlier rank's journal as " + previous + ": " +
                        std::strerror(errno));
  }
}

}  // namespace mf
