#include "huge_pages.h"

#include <doctest/doctest.h>

#include <cstdint>

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
