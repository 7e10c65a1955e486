#pragma once
// The data sets of a process, resident on one device: each source is read and uploaded once, and
// every model that trains on it shares that copy, outside the models' pools (docs/ARCHITECTURE.md,
// "A pack's memory"). Thread-safe: the threads of the streams and packed modes ask for their data
// at once.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "backends/backend.h"
#include "data/dataset.h"
#include "nn/device_data.h"
#include "nn/spec.h"

namespace mf {

struct ResidentData {
  std::string description;  // "fashion-mnist (60000 train, 10000 test)"
  // The host sets without their rows (x and y freed after the upload): what check_data reads.
  Dataset train_labels;
  std::optional<Dataset> test_labels;
  std::unique_ptr<DeviceData> train, test;  // test is null when the source has none
  size_t bytes() const { return train->bytes() + (test ? test->bytes() : 0); }
};

class DataSets {
 public:
  // `backend` holds the copies (its upstream) and uploads them on its stream; it outlives this.
  explicit DataSets(Backend& backend) : backend_(backend) {}

  // The resident copy of `source` as `spec` reads it, loaded on first use: a UserError as
  // load_data's when it cannot be read. The upload has finished when this returns, so any stream of
  // the device may read it. The spec's targets are the columns a row ends with; with
  // fit.sample_weight one more, its weight; with fit.class_weight the training rows carry their
  // class's weight (data/dataset.h RowWeights). With preprocessing its rows are readable on the
  // host too (DeviceData::host_x): on a backend whose memory the host cannot read, such a set is a
  // copy of its own, with its rows kept.
  const ResidentData& get(const std::string& source, const ModelSpec& spec);

 private:
  Backend& backend_;
  std::mutex mutex_;
  // source, targets, host rows kept, sample_weight, class_weight
  using Key = std::tuple<std::string, int, bool, bool, ClassWeights>;
  std::map<Key, std::unique_ptr<ResidentData>> sets_;
};

}  // namespace mf
