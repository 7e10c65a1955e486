#pragma once
// A data set resident on a backend's memory, copied once. It is read-only and
// owned by the process, shared by every model that trains on it, and reported
// apart from the models' pools. A model with preprocessing reads its rows on the host
// (nn/input_pipeline.h): where the host cannot read the backend's memory, the set keeps a host copy
// of its rows too, when asked to.
#include <vector>

#include "backends/backend.h"
#include "data/dataset.h"

namespace mf {

// Rows another owner holds in host memory (a numpy array's buffer): x (rows, features) and
// y (rows, target_cols, then the row's weight where weights is not none), float32, row-major.
struct HostRows {
  int64_t rows = 0;
  int features = 0, target_cols = 1;
  const float* x = nullptr;
  const float* y = nullptr;
  RowWeights weights = RowWeights::none;
};

class DeviceData {
 public:
  DeviceData(Backend& backend, const Dataset& data, bool keep_host_rows = false);
  // The rows as they are where the backend reads host memory (Backend::host_addressable: the cpu):
  // borrowed, not copied, so their owner keeps them alive and unchanged while this lives; else
  // uploaded, as a Dataset is. y may be null (rows to predict on): then y() is null.
  DeviceData(Backend& backend, const HostRows& rows);
  ~DeviceData();
  DeviceData(const DeviceData&) = delete;
  DeviceData& operator=(const DeviceData&) = delete;

  int64_t rows() const { return rows_; }
  int features() const { return features_; }
  int target_cols() const { return target_cols_; }
  // What the column after each row's targets holds, where y has one (data/dataset.h).
  RowWeights weights() const { return weights_; }
  int y_cols() const { return target_cols_ + (weights_ == RowWeights::none ? 0 : 1); }
  const float* x() const { return x_; }  // (rows, features)
  const float* y() const { return y_; }  // (rows, y_cols()): the targets, then the weight
  size_t bytes() const { return x_bytes_ + y_bytes_; }
  // The rows as the host reads them: the resident copy on a host-addressable backend
  // (Backend::host_addressable), else the host copy kept at construction, else null.
  const float* host_x() const {
    return backend_.host_addressable() ? x_ : host_x_.empty() ? nullptr : host_x_.data();
  }
  const float* host_y() const {
    return backend_.host_addressable() ? y_ : host_y_.empty() ? nullptr : host_y_.data();
  }

 private:
  Backend& backend_;
  int64_t rows_;
  int features_, target_cols_;
  RowWeights weights_;
  size_t x_bytes_, y_bytes_;
  float *x_, *y_;
  bool borrowed_ = false;               // x_ and y_ are the owner's host rows
  std::vector<float> host_x_, host_y_;  // kept only where the host cannot read x_ and y_
};

}  // namespace mf
