#pragma once
// RAII CUDA stream, event and graph, for both targets (target/target.h).
#include <functional>

#include "target/target.h"

namespace mf::MF_TARGET {

class Stream {
 public:
  Stream() { MF_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  // Takes a stream made elsewhere (a green context's, runtime/green_context.h), destroyed with it.
  explicit Stream(cudaStream_t stream) : stream_(stream) {}
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
  // cudaEventCreateWithFlags: cudaEventBlockingSync (a wait sleeps), cudaEventDisableTiming...
  explicit Event(unsigned flags) { MF_CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void record(const Stream& stream) { MF_CUDA_CHECK(cudaEventRecord(event_, stream.get())); }
  void synchronize() const {
    MF_CUDA_CHECK(cudaEventSynchronize(event_));
  }  // the work before record()
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

// A CUDA graph of the work `record` queues on `stream`, captured (nothing runs while it records)
// and instantiated once, then launched as often as needed, each launch replaying the same kernels
// with the same arguments. Capture mode thread-local: other threads' streams go on as they are.
class Graph {
 public:
  Graph(const Stream& stream, const std::function<void()>& record) {
    MF_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
      record();
    } catch (...) {
      cudaStreamEndCapture(stream.get(), &graph);  // the stream leaves capture whatever failed
      if (graph) cudaGraphDestroy(graph);
      throw;
    }
    MF_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &graph));
    const cudaError_t made = cudaGraphInstantiate(&exec_, graph, 0);
    cudaGraphDestroy(graph);
    cuda_check(made, "cudaGraphInstantiate", __FILE__, __LINE__);
  }
  ~Graph() { cudaGraphExecDestroy(exec_); }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  void launch(const Stream& stream) { MF_CUDA_CHECK(cudaGraphLaunch(exec_, stream.get())); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace mf::MF_TARGET
