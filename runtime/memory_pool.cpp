#include "runtime/memory_pool.h"

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <new>

#include "runtime/bytes.h"
#include "runtime/error.h"
#include "runtime/machine_resources.h"

namespace mf {

void* HostUpstream::allocate(size_t bytes) {
  const size_t available = mem_available_bytes();
  if (available != 0 && bytes > available)
    throw OutOfMemory("the host cannot give " + format_bytes_exact(bytes) + ": " +
                      format_bytes_exact(available) + " available");
  void* p = std::aligned_alloc(MemoryPool::kAlignment, MemoryPool::aligned(bytes));
  if (!p)
    throw OutOfMemory("the host cannot give " + format_bytes_exact(bytes) +
                      " (the allocation failed; a limit such as ulimit -v may be lower)");
  in_use_ += bytes;
  return p;
}

void HostUpstream::commit(void* p, size_t bytes) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  auto* at = static_cast<volatile std::byte*>(p);
  for (size_t offset = 0; offset < bytes; offset += page) at[offset] = std::byte{0};
}

void HostUpstream::deallocate(void* p, size_t bytes) {
  std::free(p);
  in_use_ -= bytes;
}

MemoryPool::MemoryPool(std::string owner, size_t cap_bytes, PoolMode mode, Upstream& upstream)
    : owner_(std::move(owner)), mode_(mode), upstream_(upstream) {
  stats_.cap_bytes = cap_bytes;
  if (mode_ == PoolMode::reserve) {  // the whole cap, resident now, as a GPU reservation is
    add_chunk(cap_bytes);
    upstream_.commit(chunks_.back().base, cap_bytes);
  }
}

MemoryPool::~MemoryPool() {
  for (Chunk& c : chunks_) upstream_.deallocate(c.base, c.bytes);
}

void MemoryPool::add_chunk(size_t bytes) {
  void* base = nullptr;
  try {
    base = upstream_.allocate(bytes);
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(owner_ + ": memory.limit " + format_bytes_exact(stats_.cap_bytes) +
                      " with mode " + (mode_ == PoolMode::reserve ? "reserve" : "grow") + ": " +
                      e.what() + "; lower memory.limit" +
                      (mode_ == PoolMode::reserve ? " or use mode grow" : ""));
  }
  Chunk c{static_cast<std::byte*>(base), bytes, {{0, bytes}}, {}};
  chunks_.push_back(std::move(c));
  stats_.reserved_bytes += bytes;
}

void* MemoryPool::take_from(Chunk& chunk, size_t bytes) {
  auto fit = std::find_if(chunk.free.begin(), chunk.free.end(),
                          [&](const Range& r) { return r.bytes >= bytes; });
  if (fit == chunk.free.end()) return nullptr;
  const Range taken{fit->offset, bytes};
  if (fit->bytes == bytes)
    chunk.free.erase(fit);
  else
    *fit = Range{fit->offset + bytes, fit->bytes - bytes};
  chunk.used.insert(std::upper_bound(chunk.used.begin(), chunk.used.end(), taken.offset,
                                     [](size_t off, const Range& r) { return off < r.offset; }),
                    taken);
  stats_.in_use_bytes += bytes;
  stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.in_use_bytes);
  return chunk.base + taken.offset;
}

void* MemoryPool::allocate(size_t bytes) {
  const size_t need = aligned(std::max<size_t>(bytes, 1));
  for (Chunk& c : chunks_)
    if (void* p = take_from(c, need)) return p;
  if (mode_ == PoolMode::grow && stats_.reserved_bytes + need <= stats_.cap_bytes) {
    add_chunk(need);
    return take_from(chunks_.back(), need);
  }
  throw OutOfMemory(owner_ + ": needs " + format_bytes_exact(need) + " more with " +
                    format_bytes_exact(stats_.in_use_bytes) + " in use, over its memory limit of " +
                    format_bytes_exact(stats_.cap_bytes) + "; raise memory.limit in the spec");
}

void MemoryPool::deallocate(void* p) {
  if (!p) return;
  for (Chunk& c : chunks_) {
    const auto* b = static_cast<std::byte*>(p);
    if (b < c.base || b >= c.base + c.bytes) continue;
    const size_t offset = size_t(b - c.base);
    auto used = std::lower_bound(c.used.begin(), c.used.end(), offset,
                                 [](const Range& r, size_t off) { return r.offset < off; });
    if (used == c.used.end() || used->offset != offset) break;
    Range range = *used;
    c.used.erase(used);
    stats_.in_use_bytes -= range.bytes;
    // Insert into the free list and merge with its neighbours.
    auto next = std::lower_bound(c.free.begin(), c.free.end(), offset,
                                 [](const Range& r, size_t off) { return r.offset < off; });
    if (next != c.free.end() && range.offset + range.bytes == next->offset) {
      range.bytes += next->bytes;
      next = c.free.erase(next);
    }
    if (next != c.free.begin()) {
      auto prev = std::prev(next);
      if (prev->offset + prev->bytes == range.offset) {
        prev->bytes += range.bytes;
        return;
      }
    }
    c.free.insert(next, range);
    return;
  }
  throw SystemError(owner_ + ": memory pool asked to free a pointer it did not hand out");
}

}  // namespace mf
