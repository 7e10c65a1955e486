#include "apps/multifit/run_checks.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

#include "data/dataset.h"
#include "runtime/error.h"

namespace mf {
namespace {

namespace fs = std::filesystem;

// Whether the job's model, once trained, can have a value of `by`.
bool can_have(const Job& job, RankBy by) {
  if (!job.spec) return false;
  const ModelSpec& spec = *job.spec;
  const bool accuracy = spec.has_accuracy(), validation = spec.fit.validation_split > 0;
  switch (by) {
    case RankBy::val_accuracy:
      return validation && accuracy;
    case RankBy::val_loss:
      return validation;
    case RankBy::test_accuracy:
      return has_test_set(job.data) && accuracy;
    case RankBy::test_loss:
      return has_test_set(job.data);
    case RankBy::loss:
      return spec.fit.epochs > 0;
    case RankBy::train_s:
      return true;
  }
  return false;
}

// What a model needs to have `by`, in the words of the spec, for the error that none can.
const char* needs(RankBy by) {
  switch (by) {
    case RankBy::val_accuracy:
      return "validation rows (fit.validation_split above 0) and an accuracy metric";
    case RankBy::val_loss:
      return "validation rows (fit.validation_split above 0)";
    case RankBy::test_accuracy:
      return "a test set (every data source but csv:TRAIN has one) and an accuracy metric";
    case RankBy::test_loss:
      return "a test set (every data source but csv:TRAIN has one)";
    case RankBy::loss:
      return "an epoch to train (fit.epochs above 0)";
    case RankBy::train_s:
      return "a spec that could be read";
  }
  return "";
}

}  // namespace

void check_save_best_dir(const SaveBest& save) {
  const std::string named = "--save-best " + std::to_string(save.k) + " " + save.dir;
  std::error_code error;
  const fs::file_status status = fs::status(save.dir, error);
  if (fs::exists(status) && !fs::is_directory(status))
    throw UserError(
        named +
        ": is a file, not a folder; give a folder for the best models' files (it is made when it does not exist)");
  const fs::path folder =
      fs::exists(status) ? fs::path(save.dir) : fs::absolute(save.dir, error).parent_path();
  if (!fs::exists(status) && !fs::is_directory(folder, error))
    throw UserError(named +
                    (fs::exists(folder, error)
                         ? ": " + folder.string() + " is not a folder"
                         : ": the folder " + folder.string() + " does not exist") +
                    ", so " + save.dir + " cannot be made in it");
  if (access(folder.c_str(), W_OK | X_OK) != 0)
    throw UserError(named + ": the folder " + folder.string() + " is not writable (" +
                    std::generic_category().message(errno) + ")");
}

void check_save_best_metric(const std::vector<Job>& jobs, std::optional<RankBy> by) {
  if (!by) return;  // the default is a metric some model has, if any ends ok
  if (std::any_of(jobs.begin(), jobs.end(), [&](const Job& job) { return can_have(job, *by); }))
    return;
  throw UserError(std::string("--save-best with --rank-by ") + to_string(*by) +
                  ": no model of the sweep can have " + to_string(*by) + ", which needs " +
                  needs(*by) + "; rank by another metric, or leave --rank-by out");
}

void check_fault_target(const std::vector<Job>& jobs, const std::string& name,
                        const std::string& sweep_path) {
  std::string names;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].name == name) return;
    if (i < 5) names += (i ? ", " : "") + jobs[i].name;
  }
  throw UserError(
      "--inject-fault " + name + ": " + sweep_path + " has no model of that name; " +
      (jobs.empty()
           ? "it has no models"
           : "its models are " + names +
                 (jobs.size() > 5 ? " and " + std::to_string(jobs.size() - 5) + " more" : "")));
}

}  // namespace mf
