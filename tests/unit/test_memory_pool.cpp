// MemoryPool (runtime/memory_pool.h) and the byte-size helpers (runtime/bytes.h).
// The pool is checked against a counting fake Upstream, so every byte it takes
// from "the device" is visible, and against the real HostUpstream.
#include "runtime/memory_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/bytes.h"
#include "runtime/error.h"
#include "test_support.h"

namespace mf {
namespace {

constexpr size_t A = MemoryPool::kAlignment;

// Counts what the pool asks of its upstream; hands out aligned host memory.
struct CountingUpstream final : Upstream {
  int allocations = 0, deallocations = 0;
  size_t outstanding = 0;
  std::vector<size_t> sizes;
  void* allocate(size_t bytes) override {
    ++allocations;
    outstanding += bytes;
    sizes.push_back(bytes);
    return std::aligned_alloc(A, MemoryPool::aligned(bytes));
  }
  void deallocate(void* p, size_t bytes) override {
    ++deallocations;
    outstanding -= bytes;
    std::free(p);
  }
  size_t in_use_bytes() const override { return outstanding; }
};

bool is_aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % A == 0; }

using test::contains;

TEST(MemoryPool, AlignedRoundsUpToKAlignment) {
  EXPECT_EQ(MemoryPool::aligned(0), 0u);
  EXPECT_EQ(MemoryPool::aligned(1), A);
  EXPECT_EQ(MemoryPool::aligned(A), A);
  EXPECT_EQ(MemoryPool::aligned(A + 1), 2 * A);
}

TEST(MemoryPool, ReserveTakesTheWholeCapAtConstruction) {
  CountingUpstream up;
  {
    MemoryPool pool("m", 64 * A, PoolMode::reserve, up);
    EXPECT_EQ(up.allocations, 1);
    ASSERT_EQ(up.sizes.size(), 1u);
    EXPECT_EQ(up.sizes[0], 64 * A);
    EXPECT_EQ(pool.stats().reserved_bytes, 64 * A);
    EXPECT_EQ(pool.stats().in_use_bytes, 0u);
    EXPECT_EQ(pool.mode(), PoolMode::reserve);
    // Allocations inside the cap never go back to upstream.
    for (int i = 0; i < 8; ++i) pool.allocate(3 * A);
    EXPECT_EQ(up.allocations, 1);
  }
  EXPECT_EQ(up.deallocations, 1);
  EXPECT_EQ(up.outstanding, 0u);
}

TEST(MemoryPool, GrowTakesChunksOnlyWhenNeeded) {
  CountingUpstream up;
  {
    MemoryPool pool("m", 16 * A, PoolMode::grow, up);
    EXPECT_EQ(up.allocations, 0);
    EXPECT_EQ(pool.stats().reserved_bytes, 0u);

    void* a = pool.allocate(100);  // one aligned unit
    EXPECT_EQ(up.allocations, 1);
    EXPECT_EQ(pool.stats().reserved_bytes, A);

    void* b = pool.allocate(2 * A);
    EXPECT_EQ(up.allocations, 2);
    EXPECT_EQ(pool.stats().reserved_bytes, 3 * A);

    // A freed range that fits is reused: no new chunk.
    pool.deallocate(b);
    void* c = pool.allocate(2 * A);
    EXPECT_EQ(c, b);
    EXPECT_EQ(up.allocations, 2);
    EXPECT_EQ(pool.stats().reserved_bytes, 3 * A);
    pool.deallocate(a);
    pool.deallocate(c);
  }
  EXPECT_EQ(up.deallocations, 2);
  EXPECT_EQ(up.outstanding, 0u);
}

TEST(MemoryPool, GrowEnforcesTheCap) {
  CountingUpstream up;
  MemoryPool pool("my-model", 4 * A, PoolMode::grow, up);
  pool.allocate(3 * A);
  // 3A reserved + 2A > 4A
  const std::string message = test::user_error<OutOfMemory>([&] { pool.allocate(2 * A); });
  EXPECT_TRUE(contains(message, "my-model")) << message;
  EXPECT_TRUE(contains(message, format_bytes_exact(2 * A))) << message;  // the request
  EXPECT_TRUE(contains(message, format_bytes_exact(4 * A))) << message;  // the cap
  EXPECT_EQ(up.allocations, 1);  // the refused request took nothing upstream
  EXPECT_EQ(pool.stats().reserved_bytes, 3 * A);
  // Exactly up to the cap still works.
  EXPECT_NO_THROW(pool.allocate(A));
  EXPECT_EQ(pool.stats().reserved_bytes, 4 * A);
}

TEST(MemoryPool, ReserveEnforcesTheCap) {
  CountingUpstream up;
  MemoryPool pool("reserved-model", 8 * A, PoolMode::reserve, up);
  EXPECT_THROW(pool.allocate(8 * A + 1), OutOfMemory);
  pool.allocate(8 * A);  // exactly the cap
  EXPECT_THROW(pool.allocate(1), OutOfMemory);
  // OutOfMemory is a UserError (exit code 2 in the CLI).
  EXPECT_THROW(pool.allocate(1), UserError);
  EXPECT_EQ(up.allocations, 1);
}

TEST(MemoryPool, EveryPointerIsAligned) {
  HostUpstream host;
  for (PoolMode mode : {PoolMode::grow, PoolMode::reserve}) {
    MemoryPool pool("m", 1 << 20, mode, host);
    std::vector<void*> ptrs;
    for (size_t bytes : {1, 3, 255, 256, 257, 1000, 4096, 7}) {
      void* p = pool.allocate(bytes);
      EXPECT_TRUE(is_aligned(p)) << bytes << " bytes at " << p;
      ptrs.push_back(p);
    }
    // Free every other one and allocate odd sizes into the holes.
    for (size_t i = 0; i < ptrs.size(); i += 2) pool.deallocate(ptrs[i]);
    for (size_t bytes : {5, 300, 17}) EXPECT_TRUE(is_aligned(pool.allocate(bytes)));
  }
}

TEST(MemoryPool, InUseAndPeakStatistics) {
  CountingUpstream up;
  MemoryPool pool("m", 64 * A, PoolMode::reserve, up);
  void* a = pool.allocate(100);    // A after alignment
  void* b = pool.allocate(A + 1);  // 2A
  EXPECT_EQ(pool.stats().in_use_bytes, 3 * A);
  EXPECT_EQ(pool.stats().peak_bytes, 3 * A);
  pool.deallocate(a);
  EXPECT_EQ(pool.stats().in_use_bytes, 2 * A);
  EXPECT_EQ(pool.stats().peak_bytes, 3 * A);
  void* c = pool.allocate(5 * A);
  EXPECT_EQ(pool.stats().in_use_bytes, 7 * A);
  EXPECT_EQ(pool.stats().peak_bytes, 7 * A);
  pool.deallocate(b);
  pool.deallocate(c);
  EXPECT_EQ(pool.stats().in_use_bytes, 0u);
  EXPECT_EQ(pool.stats().peak_bytes, 7 * A);
  EXPECT_EQ(pool.stats().cap_bytes, 64 * A);
  EXPECT_EQ(pool.stats().reserved_bytes, 64 * A);
}

TEST(MemoryPool, ZeroByteRequestStillGetsAUniquePointer) {
  CountingUpstream up;
  MemoryPool pool("m", 4 * A, PoolMode::reserve, up);
  void* a = pool.allocate(0);
  void* b = pool.allocate(0);
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.stats().in_use_bytes, 2 * A);
}

TEST(MemoryPool, ReusesTheSameAddressForTheSameSize) {
  HostUpstream host;
  MemoryPool pool("m", 1 << 16, PoolMode::reserve, host);
  void* a = pool.allocate(1000);
  void* b = pool.allocate(1000);
  pool.deallocate(a);
  EXPECT_EQ(pool.allocate(1000), a);
  pool.deallocate(b);
  EXPECT_EQ(pool.allocate(1000), b);
}

TEST(MemoryPool, CoalescesAdjacentFreeRanges) {
  CountingUpstream up;
  // Exactly three blocks fit: after freeing two neighbours only their merged range can hold 2A.
  MemoryPool pool("m", 3 * A, PoolMode::reserve, up);
  void* a = pool.allocate(A);
  void* b = pool.allocate(A);
  void* c = pool.allocate(A);
  EXPECT_EQ(static_cast<std::byte*>(b), static_cast<std::byte*>(a) + A);
  EXPECT_THROW(pool.allocate(1), OutOfMemory);
  // Free in both orders of merging: b then a (merge with the following range).
  pool.deallocate(b);
  pool.deallocate(a);
  void* ab = pool.allocate(2 * A);
  EXPECT_EQ(ab, a);
  // And a merge with the preceding range: c joins the free range [0, 2A) before it.
  pool.deallocate(ab);
  pool.deallocate(c);
  // Everything free again: one 3A range.
  EXPECT_EQ(pool.allocate(3 * A), a);
  EXPECT_EQ(pool.stats().in_use_bytes, 3 * A);
}

TEST(MemoryPool, CoalescesAMiddleRangeWithBothNeighbours) {
  CountingUpstream up;
  MemoryPool pool("m", 4 * A, PoolMode::reserve, up);
  void* a = pool.allocate(A);
  void* b = pool.allocate(A);
  void* c = pool.allocate(A);
  void* d = pool.allocate(A);
  pool.deallocate(a);
  pool.deallocate(c);
  EXPECT_THROW(pool.allocate(2 * A), OutOfMemory);  // two separate holes of A
  pool.deallocate(b);                               // joins a and c
  EXPECT_EQ(pool.allocate(3 * A), a);
  pool.deallocate(d);
}

TEST(MemoryPool, FreeingAForeignPointerThrows) {
  CountingUpstream up;
  MemoryPool pool("m", 4 * A, PoolMode::reserve, up);
  void* a = pool.allocate(2 * A);
  int outside = 0;
  EXPECT_ANY_THROW(pool.deallocate(&outside));
  // Inside the chunk but not the start of an allocation.
  EXPECT_ANY_THROW(pool.deallocate(static_cast<std::byte*>(a) + A));
  // Never handed out (the free tail of the chunk).
  EXPECT_ANY_THROW(pool.deallocate(static_cast<std::byte*>(a) + 2 * A));
  pool.deallocate(a);
  EXPECT_ANY_THROW(pool.deallocate(a));  // double free
  EXPECT_EQ(pool.stats().in_use_bytes, 0u);
  EXPECT_NO_THROW(pool.deallocate(nullptr));
}

TEST(MemoryPool, ARequestRoundsUpToTheAlignment) {
  CountingUpstream up;
  MemoryPool pool("m", 16 * A, PoolMode::reserve, up);
  void* d = pool.allocate(33 * sizeof(double));  // 264 bytes -> 2A
  EXPECT_TRUE(is_aligned(d));
  EXPECT_EQ(pool.stats().in_use_bytes, 2 * A);
}

// ---- the host upstream ---------------------------------------------------------

// The bytes of [p, p + bytes) that are resident in memory (mincore, page by page): whatever the
// heap held before, a reserve pool's pages must be in memory once it is made.
size_t resident_bytes(const void* p, size_t bytes) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) / page * page;
  const size_t pages = (reinterpret_cast<uintptr_t>(p) + bytes - first + page - 1) / page;
  std::vector<unsigned char> in_memory(pages);
  if (mincore(reinterpret_cast<void*>(first), pages * page, in_memory.data()) != 0) return 0;
  size_t resident = 0;
  for (unsigned char v : in_memory) resident += (v & 1) ? page : 0;
  return resident;
}

TEST(HostUpstream, ARequestOverWhatTheMachineHasIsOutOfMemoryWithTheNumbers) {
  HostUpstream host;
  // 1 PiB
  const std::string e = test::user_error<OutOfMemory>([&] { host.allocate(size_t(1) << 50); });
  EXPECT_TRUE(contains(e, "the host cannot give 1048576.00 GiB (1125899906842624 bytes)")) << e;
  EXPECT_TRUE(contains(e, "available")) << e;
}

TEST(HostUpstream, AReservePoolIsResident) {
  HostUpstream host;
  const size_t cap = size_t(64) << 20;
  MemoryPool pool("resident", cap, PoolMode::reserve, host);
  const void* all = pool.allocate(cap);  // the reservation's bytes, from their start
  // taken for real, as cudaMalloc takes it
  EXPECT_GE(resident_bytes(all, cap), cap - 2 * size_t(sysconf(_SC_PAGESIZE)));
}

TEST(HostUpstream, CountsWhatIsInUseUntilItIsReleased) {
  HostUpstream host;
  {
    MemoryPool pool("counted", size_t(8) << 20, PoolMode::reserve, host);
    EXPECT_EQ(host.in_use_bytes(), size_t(8) << 20);
  }
  // a released pool gives every byte back, as clear_session does
  EXPECT_EQ(host.in_use_bytes(), 0u);
}

TEST(MemoryPool, UpstreamRefusalNamesTheOwnerLimitAndMode) {
  HostUpstream host;
  const std::string e = test::user_error<OutOfMemory>(
      [&] { MemoryPool pool("model 'huge'", size_t(1) << 50, PoolMode::reserve, host); });
  EXPECT_TRUE(contains(e, "model 'huge': memory.limit ")) << e;
  EXPECT_TRUE(contains(e, "with mode reserve")) << e;
  EXPECT_TRUE(contains(e, "available")) << e;
  EXPECT_TRUE(contains(e, "use mode grow")) << e;
}

// ---- parse_bytes / format_bytes ------------------------------------------------

TEST(Bytes, ParsesEveryUnit) {
  EXPECT_EQ(parse_bytes("4096", "x"), 4096u);
  EXPECT_EQ(parse_bytes("4096B", "x"), 4096u);
  EXPECT_EQ(parse_bytes("512KB", "x"), 512000u);
  EXPECT_EQ(parse_bytes("3MB", "x"), 3000000u);
  EXPECT_EQ(parse_bytes("2GB", "x"), 2000000000u);
  EXPECT_EQ(parse_bytes("1KiB", "x"), 1024u);
  EXPECT_EQ(parse_bytes("64MiB", "x"), 64u << 20);
  EXPECT_EQ(parse_bytes("1.5GiB", "x"), size_t(3) << 29);
  EXPECT_EQ(parse_bytes("0.5KiB", "x"), 512u);
  EXPECT_EQ(parse_bytes("1TB", "x"), size_t(1000000000000));
  EXPECT_EQ(parse_bytes("1TiB", "x"), size_t(1) << 40);
}

TEST(Bytes, RejectsBadInputNamingWhat) {
  for (const char* bad : {"", "abc", "-1", "0", "0MiB", "12 MiB", "12mib", "12XB", "MiB", "nan",
                          "inf", "1e999", "8192PiB", "4194304TiB"}) {
    SCOPED_TRACE(testing::Message() << "parsing '" << bad << "'");
    const std::string message = test::user_error([&] { parse_bytes(bad, "memory.limit"); });
    EXPECT_TRUE(contains(message, "memory.limit")) << message;
    EXPECT_TRUE(contains(message, std::string("'") + bad + "'")) << message;
  }
}

TEST(Bytes, FormatsWithBinaryUnits) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1.00 KiB");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(3145728), "3.00 MiB");
  EXPECT_EQ(format_bytes(size_t(5) << 30), "5.00 GiB");
}

TEST(Bytes, ExactFormAddsTheByteCount) {
  EXPECT_EQ(format_bytes_exact(1023), "1023 B");
  EXPECT_EQ(format_bytes_exact(298240), "291.25 KiB (298240 bytes)");
  EXPECT_NE(format_bytes_exact(298239), format_bytes_exact(298240));
}

}  // namespace
}  // namespace mf
