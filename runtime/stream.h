#pragma once
// RAII CUDA stream and event, for both targets (kernels/target.h).
#include "kernels/target.h"

namespace mf::MF_TARGET {

class Stream {
 public:
  Stream() { MF_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const { return stream_; }
  void synchronize() const { MF_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event() { MF_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void record(const Stream& stream) { MF_CUDA_CHECK(cudaEventRecord(event_, stream.get())); }
  // Milliseconds from `start` to this event; waits for this event.
  float elapsed_ms_since(const Event& start) const {
    MF_CUDA_CHECK(cudaEventSynchronize(event_));
    float ms = 0;
    MF_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
    return ms;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace mf::MF_TARGET
