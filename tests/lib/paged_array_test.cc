#include "paged_array.h"

#include <doctest/doctest.h>

using namespace jqtrace;

TEST_CASE("paged array: push_back and resize across pages keep every value") {
  PagedArray<int, 3> a;  // pages of 8
  for (int i = 0; i < 30; ++i) a.push_back(i * i);
  REQUIRE(a.size() == 30);
  for (int i = 0; i < 30; ++i) CHECK(a[static_cast<std::size_t>(i)] == i * i);
  a.resize(40);
  CHECK(a[35] == 0);  // value-initialised
  a[39] = 7;
  CHECK(a[39] == 7);
}

TEST_CASE("paged array: releasing behind a reader keeps what is ahead") {
  PagedArray<int, 3> a;
  for (int i = 0; i < 40; ++i) a.push_back(i);
  long sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    a.release_before(i);  // under ASan, touching a freed page would fail the run
    sum += a[i];
  }
  CHECK(sum == 39 * 40 / 2);
  a.clear();
  CHECK(a.empty());
  a.push_back(5);
  CHECK(a[0] == 5);
}
