// The replay (SPEC §2 "What-if") as the library runs it: several sets of changes in one pass
// must give, set by set, what each gives replayed alone.
#include <doctest/doctest.h>

#include <stdexcept>

#include "test_util.h"
#include "whatif.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {

/// Sets of changes of every kind a replay knows, the recording first.
std::vector<WhatIfChanges> change_sets(const ReplayGraph& graph) {
  std::vector<WhatIfChanges> sets(1);
  for (std::size_t category : graph.categories_with_chunks()) {
    WhatIfChanges c;
    c.chunk_factor.assign(category + 1, 1.0);
    c.chunk_factor[category] = 0.5;
    sets.push_back(c);
  }
  WhatIfChanges publishes;
  publishes.publish_factor.assign(graph.trace().categories.size(), 0.0);
  sets.push_back(publishes);
  WhatIfChanges waits;
  waits.wake_factor = 0;
  waits.balance = 0.5;
  sets.push_back(waits);
  return sets;
}

constexpr const char* kSamples[] = {"decode-small.trace.json", "legacy-small.trace.json", "ring-full.trace.json",
                                     "single-lane.trace.json", "tiny.trace.json"};

/// A sample's graph (`ring`: its replays' ring of recent ends), the instants its units ask
/// about, and sets of changes of every kind.
struct SampleReplay {
  const Trace& trace;
  ReplayGraph graph;
  std::vector<LanePoint> points;
  std::vector<WhatIfChanges> sets;
  explicit SampleReplay(const char* name, uint32_t ring = kRecentEnds)
      : trace(load_sample(name)),
        graph(trace, 3, ring),
        points(UnitReplayer(trace, UnitRequest{}).points()),
        sets(change_sets(graph)) {}
};

}  // namespace

TEST_CASE("whatif replay: sets of changes replayed in one pass give what each gives alone, on the samples") {
  for (const char* sample : kSamples) {
    CAPTURE(sample);
    SampleReplay s(sample);
    REQUIRE(s.sets.size() >= 3);
    // Widths 1, 2, 3 and 8 are compiled apart; the others take the general loop.
    for (std::size_t width : {2, 3, 5, 8}) {
      CAPTURE(width);
      for (std::size_t first = 0; first + width <= s.sets.size(); ++first) {
        std::vector<WhatIfChanges> together(s.sets.begin() + static_cast<std::ptrdiff_t>(first),
                                            s.sets.begin() + static_cast<std::ptrdiff_t>(first + width));
        Replay wide(s.graph, s.points);
        wide.run(together);
        for (std::size_t k = 0; k < width; ++k) {
          CAPTURE(first + k);
          Replay alone(s.graph, s.points);
          alone.run({together[k]});
          CHECK(wide.trace_end(k) == alone.trace_end());
          if (together[k].changes_nothing()) CHECK(wide.max_error_ns(k) == alone.max_error_ns());
          else CHECK_THROWS_AS(wide.max_error_ns(k), std::logic_error);  // measured only unchanged
          bool same = true;
          for (const LanePoint& p : s.points)
            same = same && wide.time_at(p.lane, p.ts, k) == alone.time_at(p.lane, p.ts);
          CHECK(same);
        }
      }
    }
    // The recording replayed gives every recorded time back (its anomalies allowing).
    Replay identity(s.graph, s.points);
    identity.run({s.sets[0]});
    if (!s.graph.anomalies().any()) CHECK(identity.max_error_ns() == 0);
  }
}

TEST_CASE("whatif replay: ends read from beyond the ring of recent ones give what the ring gives") {
  // A ring of 1, 2 or 4 nodes: nearly every read comes from the ends kept apart for it.
  for (const char* sample : kSamples) {
    CAPTURE(sample);
    SampleReplay s(sample);
    // The recording first in each pass (its error is measured), then as many others as fit.
    for (std::size_t first = 1; first < s.sets.size(); first += Replay::kMaxWidth - 1) {
      std::vector<WhatIfChanges> sets{s.sets[0]};
      for (std::size_t k = first; k < s.sets.size() && sets.size() < Replay::kMaxWidth; ++k) sets.push_back(s.sets[k]);
      Replay expected(s.graph, s.points);
      expected.run(sets);
      for (uint32_t ring : {1u, 2u, 4u}) {
        CAPTURE(ring);
        SampleReplay small_ring(sample, ring);
        Replay replay(small_ring.graph, s.points);
        replay.run(sets);
        bool same = replay.max_error_ns(0) == expected.max_error_ns(0);
        for (std::size_t k = 0; k < sets.size(); ++k) {
          same = same && replay.trace_end(k) == expected.trace_end(k);
          for (const LanePoint& p : s.points)
            same = same && replay.time_at(p.lane, p.ts, k) == expected.time_at(p.lane, p.ts, k);
        }
        CHECK(same);
      }
    }
  }
  CHECK_THROWS_AS(ReplayGraph(load_sample("tiny.trace.json"), 3, 3), std::invalid_argument);
}

TEST_CASE("whatif replay: a replay of the same memory again gives the same as a fresh one") {
  const Trace& t = load_sample("decode-small.trace.json");
  ReplayGraph graph(t, 3);
  UnitReplayer units(t, UnitRequest{});
  std::vector<WhatIfChanges> sets = change_sets(graph);
  Replay reused(graph, units.points()), fresh(graph, units.points());
  reused.run({sets[1], sets[2], sets[0]});
  reused.run({sets[2]});
  fresh.run({sets[2]});
  CHECK(reused.trace_end() == fresh.trace_end());
  reused.run({sets[1], sets[0]});
  fresh.run({sets[0]});
  CHECK(reused.max_error_ns(1) == fresh.max_error_ns());
}

TEST_CASE("whatif replay: too many sets at once, or a time no one asked about, is refused") {
  // A publish on lane 1, then its chunk on lane 0: no start is kept but what points ask for.
  const Trace& t = [] {
    static Trace trace;
    load_string(trace_of({R"({"ph":"X","pid":0,"tid":1,"ts":0,"dur":5,"name":"publish","args":{"chain":7,"stage":257,"arg":0}})",
                          R"({"ph":"X","pid":0,"tid":0,"ts":10,"dur":5,"name":"chunk","args":{"chain":7,"stage":0,"arg":0}})"},
                         kProfile),
                &trace);
    return std::cref(trace);
  }();
  ReplayGraph graph(t, 3);
  Replay replay(graph, {});
  CHECK_THROWS_AS(replay.run(std::vector<WhatIfChanges>(9)), std::invalid_argument);
  replay.run({WhatIfChanges{}});
  CHECK(replay.max_error_ns() == 0);
  CHECK_THROWS_AS(replay.time_at(0, 9), std::logic_error);  // reads the chunk's start
  Replay asked(graph, {{0, 9}});
  asked.run({WhatIfChanges{}});
  CHECK(asked.time_at(0, 9) == 9);
}
