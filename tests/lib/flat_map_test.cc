#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

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

namespace {

/// Every (id, value) of m, by id.
template <typename Map>
std::map<int64_t, int64_t> contents(const Map& m) {
  std::map<int64_t, int64_t> out;
  m.for_each([&](int64_t id, int64_t v) { out[id] = v; });
  return out;
}

}  // namespace

TEST_CASE("dense-first map: the same answers as a FlatMap for dense, falling, spread and extreme ids") {
  struct Case {
    std::string what;
    std::vector<int64_t> ids;
    bool stays_dense;
  };
  Case rising{"rising from 0", {}, true}, falling{"falling (a part starting late)", {}, true},
      strided{"every second (the tracer's)", {}, true}, sparse{"every 40th", {}, false}, spread{"multiples of 2^20", {}, false},
      extremes{"int64 ends", {INT64_MAX, INT64_MIN, 0, -1, INT64_MAX - 1}, false};
  for (int64_t i = 0; i < 200000; ++i) rising.ids.push_back(i);
  for (int64_t i = 50000; i > -50000; --i) falling.ids.push_back(i);
  for (int64_t i = 0; i < 100000; ++i) strided.ids.push_back(2 * i + 7);
  for (int64_t i = 0; i < 100000; ++i) sparse.ids.push_back(40 * i - 7);
  for (int64_t i = 0; i < 5000; ++i) spread.ids.push_back(i << 20);
  for (const Case& c : {rising, falling, strided, sparse, spread, extremes}) {
    CAPTURE(c.what);
    DenseFirstMap<int64_t> dense;
    FlatMap<int64_t> flat;
    for (int64_t id : c.ids) {
      dense[id] += id / 2 + 1;
      flat[id] += id / 2 + 1;
    }
    for (int64_t id : c.ids) dense[id] += 1;  // found again, not made again
    for (int64_t id : c.ids) flat[id] += 1;
    CHECK(dense.sparse() == !c.stays_dense);
    CHECK(dense.size() == flat.size());
    CHECK(contents(dense) == contents(flat));
    int64_t absent = static_cast<int64_t>(static_cast<uint64_t>(c.ids.front()) + 1000000007);  // wraps at the edges
    CHECK(dense.find(absent) == nullptr);
    REQUIRE(dense.find(c.ids.back()));
    CHECK(*dense.find(c.ids.back()) == *flat.find(c.ids.back()));
  }
}

TEST_CASE("dense-first map: a file read lane after lane stays in pages, ids too far apart go to the FlatMap") {
  // As the first of 32 lanes meets chains (measured on a generated trace: one id in 11 of
  // those it spans, each looked up twice), then every other lane the rest of them.
  DenseFirstMap<int64_t> lanes;
  for (int64_t lane = 0; lane < 11; ++lane)
    for (int64_t id = 2 * lane; id < 600000; id += 22) {
      lanes[id] += 1;
      lanes[id] += 1;
    }
  CHECK_FALSE(lanes.sparse());
  CHECK(lanes.size() == 300000);
  CHECK(*lanes.find(599998) == 2);
  // Ids 40 apart, each met once: pages would hold 40 slots a lookup. Past 16 (and 65536
  // slots), everything moves to the FlatMap, still all there.
  DenseFirstMap<int64_t> m;
  for (int64_t i = 0; i < 200000; ++i) m[40 * i + 3] = i;
  CHECK(m.sparse());
  CHECK(m.size() == 200000);
  CHECK(*m.find(40 * 199999 + 3) == 199999);
  // Ids a page or more apart go there too, after a few hundred pages, not thousands.
  DenseFirstMap<int64_t> paged;
  for (int64_t i = 0; i < 5000; ++i) paged[i * 1024] = i;
  CHECK(paged.sparse());
  CHECK(paged.bytes() < 4u << 20);
  // Ids falling towards INT64_MIN keep their pages below, not wrapped round.
  DenseFirstMap<int64_t> low;
  for (int64_t i = 0; i < 3000; ++i) low[INT64_MIN + 3000 - i] = i;
  CHECK(!low.sparse());
  CHECK(low.size() == 3000);
  CHECK(*low.find(INT64_MIN + 1) == 2999);
  CHECK(low.find(INT64_MIN) == nullptr);
}

TEST_CASE("dense-first map: taking in another, both dense, both sparse or mixed") {
  for (int mix = 0; mix < 4; ++mix) {
    CAPTURE(mix);
    DenseFirstMap<int64_t> a, b;
    FlatMap<int64_t> expected;
    for (int64_t i = 0; i < 30000; ++i) {
      int64_t ka = mix & 1 ? i << 30 : i, kb = mix & 2 ? (i << 30) + 5 : i + 20000;
      a[ka] += 1;
      b[kb] += 2;
      expected[ka] += 1;
    }
    std::vector<std::pair<int64_t, int64_t>> taken;
    b.for_each([&](int64_t id, int64_t v) { taken.emplace_back(id, v); });
    for (auto [id, v] : taken) expected[id] += v;
    a.absorb_each(b, [&](int64_t id, int64_t v) { a[id] += v; });
    CHECK(contents(a) == contents(expected));
  }
}

TEST_CASE("flat map: cleared, small or after a big fill, it is empty and works again") {
  FlatMap<int64_t> m;
  for (int64_t n : {20, 5000, 3, 40}) {  // kept table, dropped table, kept, kept
    CAPTURE(n);
    for (int64_t i = 0; i < n; ++i) m[i * 7] = i + 1;
    CHECK(m.size() == static_cast<std::size_t>(n));
    CHECK(*m.find((n - 1) * 7) == n);
    m.clear();
    CHECK(m.size() == 0);
    CHECK(m.find(0) == nullptr);
    CHECK(m.find((n - 1) * 7) == nullptr);
    m[11] = 5;
    CHECK(*m.find(11) == 5);
    CHECK(m.size() == 1);
    m.clear();
  }
  m.clear();  // an empty one too
  CHECK(m.size() == 0);
}

TEST_CASE("short list index: a scan while short, a map past it, and reusable after clear") {
  ShortListIndex<int64_t> index;
  std::vector<int64_t> keys;
  auto key_of = [&](std::size_t i) { return keys[i]; };
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    keys.clear();
    index.clear();
    for (int64_t k = 0; k < 40; ++k) {
      CHECK(index.find(k * 3 + round, keys.size(), key_of) == SIZE_MAX);
      keys.push_back(k * 3 + round);
      for (int64_t j = 0; j <= k; j += 7) CHECK(index.find(j * 3 + round, keys.size(), key_of) == static_cast<std::size_t>(j));
    }
  }
}
