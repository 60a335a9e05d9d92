#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

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

TEST_CASE("permute in place: any permutation, any width, as a gather into a second column would") {
  std::mt19937 rng(11);
  for (std::size_t n : std::vector<std::size_t>{0, 1, 2, 7, 1000, 40000}) {
    for (int64_t scale : {int64_t{0}, int64_t{1}, int64_t{300}, int64_t{1} << 40, -(int64_t{1} << 50)}) {
      std::vector<int64_t> values(n);
      for (std::size_t i = 0; i < n; ++i) values[i] = scale * static_cast<int64_t>(rng() % 1000);
      IntColumn c;
      for (int64_t v : values) c.push(v);
      std::vector<uint32_t> order(n);
      std::iota(order.begin(), order.end(), 0u);
      std::shuffle(order.begin(), order.end(), rng);  // cycles of every length
      c.permute(order);
      REQUIRE(c.size() == n);
      for (std::size_t i = 0; i < n; ++i) {
        INFO("n " << n << " scale " << scale << " i " << i);
        REQUIRE(c[i] == values[order[i]]);
      }
    }
  }
}

TEST_CASE("columns move whether their bytes are in the object or on the heap, the column moved from is empty") {
  // An all-zero column keeps its word inside the object (no allocation); one with values
  // has a buffer, small (realloc) or large (mapped). Each must survive moves, into new
  // columns and over columns that hold values, and leave the source usable.
  for (int n : {0, 1, 3, 100, 300000}) {
    for (int64_t base : {int64_t{0}, int64_t{1}, int64_t{-5}, int64_t{1} << 40}) {
      CAPTURE(n);
      CAPTURE(base);
      IntColumn a;
      for (int i = 0; i < n; ++i) a.push(base == 0 ? 0 : base + i);
      IntColumn b(std::move(a));
      CHECK(b.size() == static_cast<std::size_t>(n));
      CHECK(a.size() == 0);
      CHECK(a.width() == 0);
      IntColumn c;
      c.push(77);
      c = std::move(b);
      REQUIRE(c.size() == static_cast<std::size_t>(n));
      for (int i = 0; i < n; i += 997) CHECK(c[static_cast<std::size_t>(i)] == (base == 0 ? 0 : base + i));
      if (n) CHECK(c[static_cast<std::size_t>(n - 1)] == (base == 0 ? 0 : base + n - 1));
      a.push(0);   // the moved-from columns take values again
      a.push(-9);
      b.push(12345678901);
      CHECK(a.size() == 2);
      CHECK(a[0] == 0);
      CHECK(a[1] == -9);
      CHECK(b.size() == 1);
      CHECK(b[0] == 12345678901);
      IntColumn zeros;
      zeros.push(0);
      zeros.push(0);
      c = std::move(zeros);  // a heap column replaced by an in-object one
      CHECK(c.size() == 2);
      CHECK(c[1] == 0);
      c.push(3);
      CHECK(c[2] == 3);
    }
  }
}

TEST_CASE("a column is 16 bytes and its first value needs no allocation") {
  // A trace of a million one-span lanes holds eight columns a lane: their size is most of
  // what such a trace costs (issue 17, many lanes).
  CHECK(sizeof(IntColumn) == 16);
  IntColumn c;
  c.push(175780914000);  // in the column's own word
  CHECK(c.width() == 5);
  CHECK(c[0] == 175780914000);
  IntColumn moved(std::move(c));
  CHECK(moved[0] == 175780914000);
  moved.push(-3);  // now it needs a buffer
  moved.push(int64_t{1} << 62);
  CHECK(moved[0] == 175780914000);
  CHECK(moved[1] == -3);
  CHECK(moved[2] == int64_t{1} << 62);
  CHECK(moved.width() == 8);
}

TEST_CASE("a column of one value appended to an empty one stays in its word") {
  // Parts of a file are joined by appending each part's lanes to the joined model's: a
  // million one-span lanes each got a 16-byte buffer a column (the room asked for was one
  // value more than the join needed).
  IntColumn one, joined;
  one.push(175780914000);
  REQUIRE(one.in_place());
  joined.append(one);
  CHECK(joined.in_place());
  CHECK(joined.size() == 1);
  CHECK(joined[0] == 175780914000);
  joined.append(one);  // two values need a buffer
  CHECK_FALSE(joined.in_place());
  CHECK(joined[1] == 175780914000);
}

TEST_CASE("a column grows from its word through malloc'd buffers to mapped ones and keeps every value") {
  // Capacities are powers of two: 8 bytes in place, then 16, 32, ... up to kMapAbove, where
  // the buffer is mapped and then grown by mremap. Every step must keep what was written.
  IntColumn c;
  constexpr int64_t kValues = 3 << 20;  // 3 bytes each: 9 MB, four mremaps past 1 MB
  for (int64_t i = 0; i < kValues; ++i) c.push((i * 2654435761) & 0x7FFFFF);
  REQUIRE(c.size() == static_cast<std::size_t>(kValues));
  CHECK(c.width() == 3);
  bool same = true;
  for (int64_t i = 0; i < kValues; ++i) same = same && c[static_cast<std::size_t>(i)] == ((i * 2654435761) & 0x7FFFFF);
  CHECK(same);
  IntColumn joined;
  joined.reserve(10, 3);
  for (int i = 0; i < 10; ++i) joined.push(i);
  joined.append(c);  // one copy of the bytes into a buffer grown past kMapAbove
  joined.append(c);
  CHECK(joined.size() == static_cast<std::size_t>(2 * kValues + 10));
  CHECK(joined[9] == 9);
  CHECK(joined[10] == c[0]);
  CHECK(joined[static_cast<std::size_t>(kValues + 10 + 12345)] == c[12345]);
  CHECK(joined[joined.size() - 1] == c[c.size() - 1]);
  joined.push(int64_t{1} << 50);  // widened past the mapped size: re-encoded into a new buffer
  CHECK(joined.width() == 7);
  CHECK(joined[static_cast<std::size_t>(kValues + 10 + 777)] == c[777]);
  CHECK(joined[joined.size() - 1] == int64_t{1} << 50);
}

TEST_CASE("a column grown into a buffer another column gave back reads only its own values") {
  // Freed mapped buffers are kept for the next column of their size, full of the old
  // column's bytes: every value read must be the new column's, at every width.
  for (int round = 0; round < 3; ++round) {
    {
      IntColumn old;
      for (int64_t i = 0; i < 300000; ++i) old.push(-1 - i * 977);  // 4-byte values, all bits busy
    }  // its buffers are kept
    IntColumn fresh;
    std::vector<int64_t> expect;
    for (int64_t i = 0; i < 300000; ++i) {
      int64_t v = i < 100000 ? i % 100 : i < 200000 ? i * 3 : -i * 1000003;  // widens twice
      fresh.push(v);
      expect.push_back(v);
    }
    IntColumn appended;
    appended.push(7);
    appended.append(fresh);
    REQUIRE(fresh.size() == expect.size());
    bool same = true;
    for (std::size_t i = 0; i < expect.size(); ++i) same = same && fresh[i] == expect[i] && appended[i + 1] == expect[i];
    CHECK(same);
    IntColumn::release_kept_buffers();
  }
}
