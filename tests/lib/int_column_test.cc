#include <doctest/doctest.h>

#include <limits>

#include "int_column.h"

using namespace jqtrace;

TEST_CASE("a column of zeros stores nothing") {
  IntColumn c;
  for (int i = 0; i < 1000; ++i) c.push(0);
  CHECK(c.size() == 1000);
  CHECK(c.width() == 0);
  CHECK(c.bytes() == 0);
  CHECK(c[999] == 0);
}

TEST_CASE("the column widens as values grow and keeps earlier values") {
  IntColumn c;
  c.push(1);
  CHECK(c.width() == 1);
  c.push(-70);
  c.push(100000);
  c.push(std::numeric_limits<int64_t>::max());
  c.push(std::numeric_limits<int64_t>::min());
  CHECK(c.width() == 8);
  CHECK(c[0] == 1);
  CHECK(c[1] == -70);
  CHECK(c[2] == 100000);
  CHECK(c[3] == std::numeric_limits<int64_t>::max());
  CHECK(c[4] == std::numeric_limits<int64_t>::min());
}

TEST_CASE("timestamps of a long trace take 5-6 bytes / not 8") {
  IntColumn c;
  for (int64_t i = 0; i < 1000; ++i) c.push(175780914000 + i);
  CHECK(c.width() == 5);
  CHECK(c[999] == 175780914999);
}

TEST_CASE("permute and set") {
  IntColumn c;
  for (int i = 0; i < 5; ++i) c.push(i * 10);
  c.permute({4, 3, 2, 1, 0});
  CHECK(c[0] == 40);
  CHECK(c[4] == 0);
  c.set(2, -5);
  c.set(3, 300);
  CHECK(c[2] == -5);
  CHECK(c[3] == 300);
  CHECK(c[1] == 30);
  CHECK(c[4] == 0);
}
