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
  PagedArray<int, 3>::Releaser read(a, 0);
  long sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    read.behind(i);  // under ASan, touching a freed page would fail the run
    sum += a[i];
  }
  CHECK(sum == 39 * 40 / 2);
  CHECK(a.pages_held() == 1);  // the last page: the reader never passed it
  a.clear();
  CHECK(a.empty());
  a.push_back(5);
  CHECK(a[0] == 5);
}

TEST_CASE("paged array: readers of two slices free only the pages wholly inside their own") {
  PagedArray<int, 3> a;  // 5 pages of 8; the slices [0, 20) and [20, 40) share page 2 (16..23)
  for (int i = 0; i < 40; ++i) a.push_back(i);
  PagedArray<int, 3>::Releaser first(a, 0), second(a, 20);
  for (std::size_t i = 20; i < 40; ++i) second.behind(i);
  second.behind(40);
  CHECK(a.pages_held() == 3);  // pages 3 and 4 freed
  for (std::size_t i = 0; i < 20; ++i) {
    first.behind(i);
    CHECK(a[i] == static_cast<int>(i));
  }
  first.behind(20);
  CHECK(a.pages_held() == 1);  // pages 0 and 1 freed; the shared page stays
  for (std::size_t i = 16; i < 24; ++i) CHECK(a[i] == static_cast<int>(i));
}
