#include "huge_pages.h"

#include <doctest/doctest.h>

#include <cstdint>

#include <sys/mman.h>
#include <unistd.h>

using jqtrace::HugeTable;
using jqtrace::kHugePage;
using jqtrace::kHugeTableMin;

TEST_CASE("HugeTable: a big table sits on 2 MiB boundaries and keeps its values through growth") {
  HugeTable<uint64_t> table;
  const std::size_t n = kHugeTableMin / sizeof(uint64_t) * 3 + 5;  // past the threshold, not a page multiple
  for (std::size_t i = 0; i < n; ++i) table.push_back(i * 2654435761u);  // grows through both paths
  CHECK(reinterpret_cast<uintptr_t>(table.data()) % kHugePage == 0);
  bool intact = true;
  for (std::size_t i = 0; i < n; ++i) intact = intact && table[i] == i * 2654435761u;
  CHECK(intact);
  table.clear();
  table.shrink_to_fit();
  CHECK(table.capacity() == 0);
}

TEST_CASE("HugeTable: small tables are ordinary memory, copies and moves work") {
  HugeTable<int32_t> small(100, 7);
  CHECK(reinterpret_cast<uintptr_t>(small.data()) % alignof(int32_t) == 0);
  HugeTable<int32_t> copy = small;
  CHECK(copy.size() == 100);
  CHECK(copy[99] == 7);
  HugeTable<int32_t> big(kHugeTableMin / sizeof(int32_t) + 1, 3);
  HugeTable<int32_t> moved = std::move(big);
  CHECK(moved.back() == 3);
  CHECK(reinterpret_cast<uintptr_t>(moved.data()) % kHugePage == 0);
}

namespace {

/// Whether the page holding p is in memory (mincore).
bool resident(const void* p) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  unsigned char in = 0;
  void* start = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(p) / page * page);
  REQUIRE(mincore(start, page, &in) == 0);
  return in & 1;
}

}  // namespace

TEST_CASE("ReleaseAsRead: a block goes back to the kernel when every element in it has been read, not before") {
  struct Wide {  // 24 bytes: elements straddle the blocks' edges
    uint64_t a, b, c;
  };
  constexpr std::size_t block = jqtrace::ReleaseAsRead<Wide>::kBlock;
  const std::size_t per_block = block / sizeof(Wide);
  HugeTable<Wide> table(per_block * 3 + kHugeTableMin / sizeof(Wide), Wide{1, 2, 3});  // touched: resident
  REQUIRE(reinterpret_cast<uintptr_t>(table.data()) % kHugePage == 0);
  jqtrace::ReleaseAsRead<Wide> release(table);
  // Read backwards through block 1 and the first element of block 2 (which straddles the
  // edge): block 1 is given back once the element across blocks 0 and 1 is read too;
  // blocks 0 and 2 stay.
  const std::size_t edge = (2 * block) / sizeof(Wide);  // the element across blocks 1 and 2
  for (std::size_t i = edge + 1; i-- > per_block + 1;) release.read(i);
  CHECK(resident(&table[per_block + per_block / 2]));  // the element straddling 0 and 1 unread
  release.read(per_block);  // straddles blocks 0 and 1: block 1 complete now
  CHECK_FALSE(resident(&table[per_block + per_block / 2]));
  CHECK(resident(&table[0]));
  CHECK(resident(&table[edge + 10]));
  for (std::size_t i = 0; i < per_block; ++i) release.read(i);
  CHECK_FALSE(resident(&table[0]));
  CHECK(resident(&table[edge + 10]));
}

TEST_CASE("ReleaseAsRead: a small table is ordinary memory and is left alone") {
  HugeTable<uint32_t> small(1000, 5);
  jqtrace::ReleaseAsRead<uint32_t> release(small);
  for (std::size_t i = 0; i < small.size(); ++i) release.read(i);
  CHECK(small[999] == 5);
}
