#pragma once
// A capped memory pool per model. Every byte a model uses on its device comes
// from its own pool; the pool takes memory from an Upstream (host memory, or
// cudaMalloc on a device) and never more than its cap.
//
//   grow:    takes a chunk from upstream when no free range fits (like
//            TensorFlow's memory growth), up to the cap.
//   reserve: takes the whole cap from upstream at construction (like a
//            TensorFlow logical device with memory_limit).
//
// Freed ranges are coalesced and reused. Not thread-safe: one model, one owner.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/names.h"

namespace mf {

struct Upstream {
  virtual ~Upstream() = default;
  // throws OutOfMemory with what was asked and what is free
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* p, size_t bytes) = 0;
  // Makes allocated memory resident now, as a reservation must be; device memory already is.
  virtual void commit(void* /*p*/, size_t /*bytes*/) {}
  // Bytes allocated and not yet deallocated: what pools and data sets hold of this upstream.
  virtual size_t in_use_bytes() const = 0;
};

// Plain host memory, aligned for SIMD and for the pool's alignment. A request over what the machine
// has available is refused at once rather than granted on credit and killed later.
class HostUpstream final : public Upstream {
 public:
  void* allocate(size_t bytes) override;
  void deallocate(void* p, size_t bytes) override;
  void commit(void* p, size_t bytes) override;  // touches every page
  size_t in_use_bytes() const override { return in_use_; }

 private:
  std::atomic<size_t> in_use_{0};
};

enum class PoolMode { grow, reserve };
inline constexpr Named<PoolMode> kPoolModeNames[] = {{"grow", PoolMode::grow},
                                                     {"reserve", PoolMode::reserve}};
inline const char* to_string(PoolMode m) { return name_of(kPoolModeNames, m); }

struct PoolStats {
  size_t cap_bytes = 0;
  size_t reserved_bytes = 0;  // taken from upstream
  size_t in_use_bytes = 0;    // handed out, after alignment
  size_t peak_bytes = 0;      // high-water mark of in_use_bytes
};

class MemoryPool {
 public:
  static constexpr size_t kAlignment = 256;  // cudaMalloc's alignment; coalesced loads
  static size_t aligned(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

  MemoryPool(std::string owner, size_t cap_bytes, PoolMode mode, Upstream& upstream);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // Throws OutOfMemory (a UserError) naming the owner, the request and the cap when it does not
  // fit.
  void* allocate(size_t bytes);
  void deallocate(void* p);

  const PoolStats& stats() const { return stats_; }
  PoolMode mode() const { return mode_; }

 private:
  struct Range {
    size_t offset, bytes;
  };
  struct Chunk {
    std::byte* base;
    size_t bytes;
    std::vector<Range> free;  // sorted by offset, coalesced
    std::vector<Range> used;  // sorted by offset
  };
  void* take_from(Chunk& chunk, size_t bytes);
  void add_chunk(size_t bytes);

  std::string owner_;
  PoolMode mode_;
  Upstream& upstream_;
  std::vector<Chunk> chunks_;
  PoolStats stats_;
};

}  // namespace mf
