#include "largest.h"

#include <doctest/doctest.h>

#include <cstdint>

using jqtrace::indices_of_largest;

TEST_CASE("indices_of_largest: the largest, in index order") {
  std::vector<int64_t> v = {5, 1, 9, 3, 9, 7};
  CHECK(indices_of_largest(v, 3) == std::vector<std::size_t>{2, 4, 5});
  CHECK(indices_of_largest(v, 1) == std::vector<std::size_t>{2});  // a tie goes to the earlier index
  CHECK(indices_of_largest(v, 0).empty());
}

TEST_CASE("indices_of_largest: every index when there are no more than asked") {
  std::vector<int64_t> v = {4, 4, 2};
  CHECK(indices_of_largest(v, 3) == std::vector<std::size_t>{0, 1, 2});
  CHECK(indices_of_largest(v, 10) == std::vector<std::size_t>{0, 1, 2});
  CHECK(indices_of_largest(std::vector<int64_t>{}, 2).empty());
}

TEST_CASE("indices_of_largest: ties among many go to the earlier indices") {
  std::vector<int64_t> v(1000, 7);
  v[900] = 8;
  std::vector<std::size_t> want = {0, 1, 2, 900};
  CHECK(indices_of_largest(v, 4) == want);
}
