#include "nn/device_data.h"

namespace mf {

DeviceData::DeviceData(Backend& backend, const Dataset& data, bool keep_host_rows)
    : backend_(backend),
      rows_(data.rows),
      features_(data.features),
      target_cols_(data.target_cols),
      x_bytes_(data.x.size() * sizeof(float)),
      y_bytes_(data.y.size() * sizeof(float)) {
  x_ = static_cast<float*>(backend_.upstream().allocate(x_bytes_));
  y_ = static_cast<float*>(backend_.upstream().allocate(y_bytes_));
  backend_.to_device(x_, data.x.data(), x_bytes_);
  backend_.to_device(y_, data.y.data(), y_bytes_);
  if (keep_host_rows && !backend_.host_addressable()) host_x_ = data.x, host_y_ = data.y;
}

DeviceData::~DeviceData() {
  backend_.upstream().deallocate(x_, x_bytes_);
  backend_.upstream().deallocate(y_, y_bytes_);
}

}  // namespace mf
