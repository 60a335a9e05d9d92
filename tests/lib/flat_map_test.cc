#include <doctest/doctest.h>

#include "flat_map.h"

using namespace jqtrace;

TEST_CASE("insert / find and count entries") {
  FlatMap<int> m;
  m[17] = 3;
  m[-5] = 7;
  CHECK(m.size() == 2);
  REQUIRE(m.find(17));
  CHECK(*m.find(17) == 3);
  CHECK(m.find(18) == nullptr);
  ++m[17];
  CHECK(*m.find(17) == 4);
}

TEST_CASE("sequential and strided keys survive growth") {
  FlatMap<int64_t> m;
  for (int64_t i = 0; i < 100000; ++i) m[26 + 2 * i] = i;
  for (int64_t i = 0; i < 1000; ++i) m[i << 24] = -i;
  CHECK(m.size() == 101000);  // no strided key collides with 26, 28, ...
  CHECK(*m.find(26 + 2 * 99999) == 99999);
  CHECK(*m.find(int64_t{999} << 24) == -999);
  int64_t visited = 0;
  m.for_each([&](int64_t, int64_t) { ++visited; });
  CHECK(visited == static_cast<int64_t>(m.size()));
}
