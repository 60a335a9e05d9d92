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

TEST_CASE("flat map: dense ids leave no long runs, and joining tables stays linear") {
  // Chain ids are dense counters. A near-identity hash put 0..N in one run of N occupied
  // slots; every key landing inside it probed to the end, and joining two tables of parts
  // read in parallel took seconds. Runs must stay short, before and after a join.
  FlatMap<uint32_t> a, b;
  for (int64_t k = 0; k < 300000; ++k) a[k] = 1;
  for (int64_t k = 1000000; k < 1300000; ++k) b[k] = 2;
  for (int64_t k = 0; k < 300000; k += 3) b[k] = 3;  // overlapping ids too
  CHECK(a.longest_run() < 1000);
  CHECK(b.longest_run() < 1000);
  std::size_t visited = 0;
  a.absorb_each(b, [&](int64_t key, uint32_t value) {
    ++visited;
    a[key] += value;
  });
  CHECK(visited == b.size());
  CHECK(a.size() == 600000);
  CHECK(a.longest_run() < 1000);
  CHECK(*a.find(3) == 4);
  CHECK(*a.find(1000000) == 2);
  // A small table taking in a big one (a part with few chains joining one with many).
  FlatMap<uint32_t> small;
  small[5] = 7;
  small.absorb_each(a, [&](int64_t key, uint32_t value) { small[key] += value; });
  CHECK(small.size() == 600000);
  CHECK(small.longest_run() < 1000);
  CHECK(*small.find(5) == 8);
}

TEST_CASE("id map: an array over a small id range, a hash table otherwise, the same answers") {
  IdMap<uint32_t> dense(100, 199, 1000), spread(0, int64_t{1} << 40, 1000);
  for (IdMap<uint32_t>* m : {&dense, &spread}) {
    (*m)[150] = 7;
    (*m)[5] = 9;                      // outside the range given: still kept
    (*m)[int64_t{1} << 40] = 11;
    CHECK(*m->find(150) == 7);
    CHECK(*m->find(5) == 9);
    CHECK(*m->find(int64_t{1} << 40) == 11);
    CHECK(m->find(-3) == nullptr);
  }
  CHECK(*dense.find(160) == 0);        // in the array: default until set
  CHECK(spread.find(160) == nullptr);  // in the table: absent
  IdMap<uint32_t> empty(INT64_MAX, INT64_MIN, 1000);  // no ids at all
  CHECK(empty.find(0) == nullptr);
  empty[0] = 1;
  CHECK(*empty.find(0) == 1);
}
