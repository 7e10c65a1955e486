#pragma once
// A data set resident on a backend's memory, copied once. It is read-only and
// owned by the process, shared by every model that trains on it, and reported
// apart from the models' pools.
#include "backends/backend.h"
#include "data/dataset.h"

namespace mf {

class DeviceData {
 public:
  DeviceData(Backend& backend, const Dataset& data);
  ~DeviceData();
  DeviceData(const DeviceData&) = delete;
  DeviceData& operator=(const DeviceData&) = delete;

  int64_t rows() const { return rows_; }
  int features() const { return features_; }
  int target_cols() const { return target_cols_; }
  const float* x() const { return x_; }  // (rows, features)
  const float* y() const { return y_; }  // (rows, target_cols)
  size_t bytes() const { return x_bytes_ + y_bytes_; }

 private:
  Backend& backend_;
  int64_t rows_;
  int features_, target_cols_;
  size_t x_bytes_, y_bytes_;
  float *x_, *y_;
};

}  // namespace mf
