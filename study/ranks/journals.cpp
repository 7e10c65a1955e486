#include "study/ranks/journals.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "runtime/error.h"
#include "study/rank_path.h"

namespace mf {

std::vector<std::string> rank_journals_beside(const std::string& path) {
  std::vector<std::string> paths;
  for (auto& [rank, sibling] : rank_siblings(path)) paths.push_back(std::move(sibling));
  return paths;
}

JournalContents read_with_rank_journals(const std::string& path, const std::vector<Job>& jobs,
                                        const JournalRun& run, EndedModels* others) {
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
  for (const auto& [rank, rank_path] : rank_siblings(path)) {
    if (rank < from) continue;
    const std::string previous = rank_path + ".previous";
    if (std::rename(rank_path.c_str(), previous.c_str()) != 0)
      throw SystemError(rank_path + ": cannot set aside an earlier rank's journal as " + previous +
                        ": " + std::strerror(errno));
  }
}

}  // namespace mf
