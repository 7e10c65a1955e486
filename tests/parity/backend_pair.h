#pragma once
// Helpers for comparing a CUDA backend with the CPU backend: buffers on a
// backend, random inputs, element-wise comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "backends/backend.h"
#include "backends/cpu/cpu_backend.h"
#include "runtime/rng.h"

namespace mf::test {

// A buffer on a backend, freed with it.
template <class T>
class Buffer {
 public:
  Buffer(Backend& backend, const std::vector<T>& host) : backend_(backend), count_(host.size()) {
    data_ = static_cast<T*>(backend_.upstream().allocate(bytes()));
    backend_.to_device(data_, host.data(), bytes());
  }
  ~Buffer() { backend_.upstream().deallocate(data_, bytes()); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  T* get() { return data_; }
  std::vector<T> read() {
    std::vector<T> host(count_);
    backend_.to_host(host.data(), data_, bytes());
    return host;
  }

 private:
  size_t bytes() const { return count_ * sizeof(T); }
  Backend& backend_;
  size_t count_;
  T* data_;
};

inline std::vector<float> random_vector(size_t n, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform(lo, hi);
  return v;
}

// Output buffers start as NaN, so an output the backend never writes fails the comparison.
inline std::vector<float> nans(size_t n) { return std::vector<float>(n, NAN); }

// |got - want| <= tolerance * (1 + |want|) for every element.
inline void expect_close(const std::vector<float>& want, const std::vector<float>& got,
                         float tolerance, const char* what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const bool ok = std::fabs(got[i] - want[i]) <= tolerance * (1.f + std::fabs(want[i]));
    if (!ok && reported++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: want " << want[i] << ", got " << got[i];
  }
}

}  // namespace mf::test
