// gaps on samples/tiny.trace.json, checked by hand (the layout is in stats_test.cc):
//   caller = tid 1 (the highest tid with X events); chains in order of first appearance:
//   11 (worker chunk), 13, then 15 (a chunk, no publish: counted, not classified).
//   chain 11: publish 5+4, 2 stages, tag 1; caller waits end at 38 and 50 -> wall 50-5 = 45;
//     first worker chunk at 10 -> claim 10 - 9 = 1; stage 0: chunks [10,30] (worker) and
//     [10,32] (caller): span 22, busy 42, eff-par 42/22, 2 lanes, last chunk 22;
//     stage 1: [40,50]: span 10, busy 10, eff-par 1, 1 lane, last 10, gap 40 - 32 = 8.
//   chain 13: publish 62+6, 1 stage, tag 3; caller wait ends 85 -> wall 23; claim 70 - 68 = 2.
//   publishes: 4 and 6 us -> p50 5, one over 5 us (chain 13); chain 13's last chunk ends at
//   85 and no publish follows: no post-classifier gap.
//   worker busy spans [10,30] [40,50] [70,85] [120,128]: gaps 10, 20, 35.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "gaps.h"
#include "test_util.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {
GapsReport gaps_of(const char* sample, ClassBy by, Range* range = nullptr) {
  const Trace& t = load_sample(sample);
  GapsOptions o;
  o.by = by;
  GapsReport g;
  std::string error;
  REQUIRE(compute_gaps(t, range ? *range : whole_trace(t), o, &g, &error));
  return g;
}
const ChainClass& cls(const GapsReport& g, const std::string& key) {
  for (const ChainClass& c : g.classes)
    if (c.key == key) return c;
  FAIL("no class " << key);
  return g.classes.front();
}
}  // namespace

TEST_CASE("gaps header: chains, wakes") {
  GapsReport g = gaps_of("tiny.trace.json", ClassBy::nstages);
  CHECK(g.chains == 3);
  CHECK(g.wakes == 1);
  CHECK(g.wake_dur_us.p50 == 30.0);
}

TEST_CASE("gaps chain classes by stage count, most stages first") {
  GapsReport g = gaps_of("tiny.trace.json", ClassBy::nstages);
  REQUIRE(g.classes.size() == 2);
  const ChainClass& ffn = g.classes[0];
  CHECK(ffn.name == "ffn");
  CHECK(ffn.n == 1);
  CHECK(ffn.chunks_per_chain == 3);
  CHECK(ffn.wall_us.p50 == 45.0);
  CHECK(ffn.publish_us.p50 == 4.0);
  CHECK(ffn.first_claim_us.p50 == 1.0);
  REQUIRE(ffn.stages.size() == 2);
  CHECK(ffn.stages[0].span_us.p50 == 22.0);
  CHECK(ffn.stages[0].busy_us.p50 == 42.0);
  CHECK(ffn.stages[0].eff_par.p50 == doctest::Approx(42.0 / 22.0));
  CHECK(ffn.stages[0].lanes.p50 == 2.0);
  CHECK(ffn.stages[0].last_chunk_us.p50 == 22.0);
  CHECK(ffn.stages[0].gap_from_prev_us.count == 0);
  CHECK(ffn.stages[1].gap_from_prev_us.p50 == 8.0);
  CHECK(ffn.stages[1].eff_par.p50 == 1.0);
  const ChainClass& final_ = cls(g, "1");
  CHECK(final_.name == "final");
  CHECK(final_.wall_us.p50 == 23.0);
  CHECK(final_.first_claim_us.p50 == 2.0);
}

TEST_CASE("gaps classes by category") {
  GapsReport g = gaps_of("tiny.trace.json", ClassBy::category);
  CHECK(default_class_by(load_sample("tiny.trace.json")) == ClassBy::category);
  CHECK(cls(g, "attn chain").n == 1);
  CHECK(cls(g, "ffn chain").stages.size() == 1);
}

TEST_CASE("gaps publish metrics") {
  GapsReport g = gaps_of("tiny.trace.json", ClassBy::nstages);
  CHECK(g.publish.count == 2);
  CHECK(g.publish.fat_count == 1);
  REQUIRE(g.publish.fat.size() == 1);
  CHECK(g.publish.fat[0].chain == 13);
  CHECK(g.publish.fat[0].stages == 1);
  CHECK(g.publish.dur_us.p50 == 5.0);
  CHECK(g.publish.dur_us.max == 6.0);
  CHECK(g.publish.post_cls_gap_us.count == 0);
}

TEST_CASE("gaps lane idle gaps") {
  GapsReport g = gaps_of("tiny.trace.json", ClassBy::nstages);
  REQUIRE(g.lanes.size() == 2);
  CHECK(g.lanes[0].gaps == 3);
  CHECK(g.lanes[0].idle_ns == 65000);
  CHECK(g.lanes[0].gap_us.p50 == 20.0);
  CHECK(g.lanes[0].gap_us.max == 35.0);
}

TEST_CASE("gaps on a single lane: no worker claims, post-classifier gaps") {
  // chain 5: 2 stages; chain 7, 9: 1 stage. Chain 7's chunk ends at 27, publish 9 starts at 30.
  GapsReport g = gaps_of("single-lane.trace.json", ClassBy::nstages);
  const ChainClass& final_ = cls(g, "1");
  CHECK(final_.n == 2);
  CHECK(final_.first_claim_us.count == 0);  // every chunk ran on the caller
  CHECK(g.publish.post_cls_gap_us.count == 1);
  CHECK(g.publish.post_cls_gap_us.p50 == 3.0);
  CHECK(g.publish.next_publish_dur_us.p50 == 1.0);
  CHECK(cls(g, "2").stages[1].gap_from_prev_us.p50 == doctest::Approx(0.75));
}

TEST_CASE("gaps over an empty window") {
  Range nowhere{500000, 600000};
  GapsReport g = gaps_of("tiny.trace.json", ClassBy::nstages, &nowhere);
  CHECK(g.chains == 0);
  CHECK(g.classes.empty());
  CHECK(g.publish.count == 0);
}

TEST_CASE("tail metrics need 4 lanes: a hand-made stage on 4 lanes") {
  // Chain 3, one stage; lanes 0..3 end at 10, 12, 14, 20 (starts 0): span 20,
  // busy 10+12+14+20 = 56 -> idle 1 - 56/80 = 30%; median lane end ends[2] = 14 -> tail 30%.
  Trace t;
  load_string(trace_of({R"({"ph":"X","pid":0,"tid":0,"ts":0,"dur":10,"name":"chunk","args":{"stage":0,"arg":0,"chain":3}})",
                        R"({"ph":"X","pid":0,"tid":1,"ts":0,"dur":12,"name":"chunk","args":{"stage":0,"arg":1,"chain":3}})",
                        R"({"ph":"X","pid":0,"tid":2,"ts":0,"dur":14,"name":"chunk","args":{"stage":0,"arg":2,"chain":3}})",
                        R"({"ph":"X","pid":0,"tid":3,"ts":0,"dur":20,"name":"chunk","args":{"stage":0,"arg":3,"chain":3}})",
                        R"({"ph":"X","pid":0,"tid":4,"ts":-1,"dur":0.5,"name":"publish","args":{"stage":1,"arg":4,"chain":3}})"}),
              &t);
  GapsReport g;
  std::string error;
  REQUIRE(compute_gaps(t, whole_trace(t), GapsOptions{}, &g, &error));
  REQUIRE(g.tail.size() == 1);
  CHECK(g.tail[0].name == "final");
  CHECK(g.tail[0].n == 1);
  CHECK(g.tail[0].span_us.p50 == 20.0);
  CHECK(g.tail[0].lanes.p50 == 4.0);
  CHECK(g.tail[0].idle_pct.p50 == doctest::Approx(30.0));
  CHECK(g.tail[0].tail_pct.p50 == doctest::Approx(30.0));
}
