#include "nn/device_data.h"

namespace mf {

DeviceData::DeviceData(Backend& backend, const Dataset& data, bool keep_host_rows)
    : backend_(backend),
      rows_(data.rows),
      features_(data.features),
      target_cols_(data.target_cols),
      weights_(data.weights),
      x_bytes_(data.x.size() * sizeof(float)),
      y_bytes_(data.y.size() * sizeof(float)) {
  x_ = static_cast<float*>(backend_.upstream().allocate(x_bytes_));
  y_ = static_cast<float*>(backend_.upstream().allocate(y_bytes_));
  backend_.to_device(x_, data.x.data(), x_bytes_);
  backend_.to_device(y_, data.y.data(), y_bytes_);
  if (keep_host_rows && !backend_.host_addressable()) host_x_ = data.x, host_y_ = data.y;
}

DeviceData::DeviceData(Backend& backend, const HostRows& rows)
    : backend_(backend),
      rows_(rows.rows),
      features_(rows.features),
      target_cols_(rows.target_cols),
      weights_(rows.weights),
      x_bytes_(size_t(rows.rows) * size_t(rows.features) * sizeof(float)),
      y_bytes_(rows.y ? size_t(rows.rows) * size_t(y_cols()) * sizeof(float) : 0),
      y_(nullptr) {
  if (backend_.host_addressable()) {
    borrowed_ = true;
    x_ = const_cast<float*>(rows.x);  // read only: nothing writes a data set
    y_ = const_cast<float*>(rows.y);
    return;
  }
  x_ = static_cast<float*>(backend_.upstream().allocate(x_bytes_));
  backend_.to_device(x_, rows.x, x_bytes_);
  if (y_bytes_ == 0) return;  // rows to predict on: no targets
  y_ = static_cast<float*>(backend_.upstream().allocate(y_bytes_));
  backend_.to_device(y_, rows.y, y_bytes_);
}

DeviceData::~DeviceData() {
  if (borrowed_) return;
  backend_.upstream().deallocate(x_, x_bytes_);
  if (y_) backend_.upstream().deallocate(y_, y_bytes_);
}

}  // namespace mf
