#include "study/data_sets.h"

namespace mf {
namespace {

Dataset without_rows(Dataset set) {
  set.x = {};
  set.y = {};
  return set;
}

}  // namespace

const ResidentData& DataSets::get(const std::string& source, const ModelSpec& spec) {
  // one reader at a time: a second model asking for the same set waits for the first
  std::lock_guard lock(mutex_);
  // else every set's rows are the host's
  const bool keep = !spec.preprocessing.empty() && !backend_.host_addressable();
  const FitSpec& fit = spec.fit;
  std::unique_ptr<ResidentData>& slot =
      sets_[{source, spec.targets, keep, fit.sample_weight, fit.class_weight}];
  if (slot) return *slot;
  DataSplit split = load_data(source, spec.targets, fit.sample_weight);
  if (!fit.class_weight.empty()) weigh_by_class(split.train, fit.class_weight);
  auto set = std::make_unique<ResidentData>();
  set->description = split.description;
  set->train = std::make_unique<DeviceData>(backend_, split.train, keep);
  if (split.test) set->test = std::make_unique<DeviceData>(backend_, *split.test);
  backend_.synchronize();  // uploaded before the host rows go and before another stream reads them
  set->train_labels = without_rows(std::move(split.train));
  if (split.test) set->test_labels = without_rows(std::move(*split.test));
  slot = std::move(set);
  return *slot;
}

}  // namespace mf
