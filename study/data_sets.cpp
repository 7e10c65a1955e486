#include "study/data_sets.h"

namespace mf {
namespace {

Dataset without_rows(Dataset set) {
  set.x = {};
  set.y = {};
  return set;
}

}  // namespace

const ResidentData& DataSets::get(const std::string& source, int targets, bool host_rows) {
  // one reader at a time: a second model asking for the same set waits for the first
  std::lock_guard lock(mutex_);
  // else every set's rows are the host's
  const bool keep = host_rows && !backend_.host_addressable();
  std::unique_ptr<ResidentData>& slot = sets_[{source, targets, keep}];
  if (slot) return *slot;
  DataSplit split = load_data(source, targets);
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
