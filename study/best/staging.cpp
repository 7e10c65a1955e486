#include "study/best/staging.h"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "runtime/error.h"
#include "study/rank_path.h"

namespace mf {
namespace {

namespace fs = std::filesystem;

// Moves every file of `from` into `into`, made when missing.
void move_files(const fs::path& from, const fs::path& into) {
  std::error_code error;
  fs::create_directory(into, error);
  for (const fs::directory_entry& file : fs::directory_iterator(from, error)) {
    const fs::path to = into / file.path().filename();
    if (std::rename(file.path().c_str(), to.c_str()) != 0)
      throw SystemError(to.string() + ": cannot move a rank's staged weights there: " +
                        std::generic_category().message(errno));
  }
}

}  // namespace

void gather_staging(const SaveBest& save, bool resume) {
  const fs::path into = fs::path(save.dir) / kStagingFolder;
  for (const auto& [rank, folder] : rank_siblings(into.string())) {
    std::error_code error;
    if (!fs::is_directory(folder, error)) continue;
    if (resume) move_files(folder, into);
    fs::remove_all(folder, error);
  }
}

BestKeeper::BestKeeper(SaveBest save, std::optional<RankBy> by, const std::string& staging,
                       bool resume)
    : save_(std::move(save)),
      staging_((fs::path(save_.dir) / staging).string()),
      best_(save_.k, by) {
  std::error_code error;
  fs::create_directory(save_.dir, error);
  // Where the folder cannot be made (a read-only or special file system), the user picks another.
  if (error)
    throw UserError("--save-best " + save_.dir + ": cannot make the folder: " + error.message() +
                    "; give a folder where this user may write");
  if (!resume) fs::remove_all(staging_, error);  // a killed run's: its files are of no use now
  fs::create_directory(staging_, error);
  if (error || !fs::is_directory(staging_))
    throw UserError("--save-best " + save_.dir + ": cannot make the staging folder " + staging_ +
                    ": " + (error ? error.message() : "something else is there") +
                    "; give a folder where this user may write");
}

std::string BestKeeper::staging_file(const std::string& name, size_t index) const {
  return (fs::path(staging_) / (best_file_stem(name, index) + kWeightsSuffix)).string();
}

void BestKeeper::keep(std::vector<Job>& jobs) const {
  for (Job& job : jobs) job.keep = staging_file(job.name, job.index);
}

void BestKeeper::stage(const ModelReport& report, const std::function<void()>& save) {
  std::lock_guard lock(mutex_);
  if (!best_.admits(report)) return;
  save();
  // Its report may yet be corrected (a poisoned context fails every model of the process), but then
  // so are all the others', and nothing is to be kept.
  take(report);
}

void BestKeeper::ended(const ModelReport& report) {
  std::lock_guard lock(mutex_);
  take(report);
}

void BestKeeper::resumed(const ModelReport& report) {
  std::error_code error;
  if (fs::is_regular_file(staging_file(report.name, report.index), error)) ended(report);
}

std::vector<size_t> BestKeeper::staged() const {
  std::lock_guard lock(mutex_);
  return best_.kept();
}

// Offers the model to the top K and removes the files it does not keep: the model's own, and those
// it displaced. A file left behind goes with the staging folder at the end.
void BestKeeper::take(const ModelReport& report) {
  const TopK::Offer offer = best_.offer(report);
  std::error_code error;
  if (!offer.keep) fs::remove(staging_file(report.name, report.index), error);
  for (const TopK::Dropped& model : offer.drop)
    fs::remove(staging_file(model.name, model.index), error);
}

}  // namespace mf
