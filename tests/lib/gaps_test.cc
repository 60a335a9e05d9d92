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
/// gaps over the whole of a trace made of these events, with the default options.
GapsReport gaps_of_events(const std::vector<std::string>& events) {
  Trace t;
  load_string(trace_of(events), &t);
  GapsReport g;
  std::string error;
  REQUIRE(compute_gaps(t, whole_trace(t), GapsOptions{}, &g, &error));
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
  CHECK(g.wake_dur_ns.p50 == 30000.0);
}

TEST_CASE("gaps chain classes by stage count, most stages first") {
  GapsReport g = gaps_of("tiny.trace.json", ClassBy::nstages);
  REQUIRE(g.classes.size() == 2);
  const ChainClass& ffn = g.classes[0];
  CHECK(ffn.name == "ffn");
  CHECK(ffn.n == 1);
  CHECK(ffn.chunks_per_chain == 3);
  CHECK(ffn.wall_ns.p50 == 45000.0);
  CHECK(ffn.publish_ns.p50 == 4000.0);
  CHECK(ffn.first_claim_ns.p50 == 1000.0);
  REQUIRE(ffn.stages.size() == 2);
  CHECK(ffn.stages[0].span_ns.p50 == 22000.0);
  CHECK(ffn.stages[0].busy_ns.p50 == 42000.0);
  CHECK(ffn.stages[0].eff_par.p50 == doctest::Approx(42.0 / 22.0));
  CHECK(ffn.stages[0].lanes.p50 == 2.0);
  CHECK(ffn.stages[0].last_chunk_ns.p50 == 22000.0);
  CHECK(ffn.stages[0].gap_from_prev_ns.count == 0);
  CHECK(ffn.stages[1].gap_from_prev_ns.p50 == 8000.0);
  CHECK(ffn.stages[1].eff_par.p50 == 1.0);
  const ChainClass& final_ = cls(g, "1");
  CHECK(final_.name == "final");
  CHECK(final_.wall_ns.p50 == 23000.0);
  CHECK(final_.first_claim_ns.p50 == 2000.0);
}

TEST_CASE("gaps classes by category") {
  GapsReport g = gaps_of("tiny.trace.json", ClassBy::category);
  CHECK(gaps_of("tiny.trace.json", ClassBy::automatic).by == ClassBy::category);
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
  CHECK(g.publish.durations.p50 == 5000.0);
  CHECK(g.publish.durations.max == 6000.0);
  CHECK(g.publish.post_cls_gap_ns.count == 0);
}

TEST_CASE("gaps lane idle gaps") {
  GapsReport g = gaps_of("tiny.trace.json", ClassBy::nstages);
  REQUIRE(g.lanes.size() == 2);
  CHECK(g.lanes[0].gaps == 3);
  CHECK(g.lanes[0].idle_ns == 65000);
  CHECK(g.lanes[0].gap_ns.p50 == 20000.0);
  CHECK(g.lanes[0].gap_ns.max == 35000.0);
}

TEST_CASE("gaps on a single lane: no worker claims, post-classifier gaps") {
  // chain 5: 2 stages; chain 7, 9: 1 stage. Chain 7's chunk ends at 27, publish 9 starts at 30.
  GapsReport g = gaps_of("single-lane.trace.json", ClassBy::nstages);
  const ChainClass& final_ = cls(g, "1");
  CHECK(final_.n == 2);
  CHECK(final_.first_claim_ns.count == 0);  // every chunk ran on the caller
  CHECK(g.publish.post_cls_gap_ns.count == 1);
  CHECK(g.publish.post_cls_gap_ns.p50 == 3000.0);
  CHECK(g.publish.next_publish_dur_ns.p50 == 1000.0);
  CHECK(cls(g, "2").stages[1].gap_from_prev_ns.p50 == doctest::Approx(750.0));
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
  GapsReport g = gaps_of_events(
      {R"({"ph":"X","pid":0,"tid":0,"ts":0,"dur":10,"name":"chunk","args":{"stage":0,"arg":0,"chain":3}})",
       R"({"ph":"X","pid":0,"tid":1,"ts":0,"dur":12,"name":"chunk","args":{"stage":0,"arg":1,"chain":3}})",
       R"({"ph":"X","pid":0,"tid":2,"ts":0,"dur":14,"name":"chunk","args":{"stage":0,"arg":2,"chain":3}})",
       R"({"ph":"X","pid":0,"tid":3,"ts":0,"dur":20,"name":"chunk","args":{"stage":0,"arg":3,"chain":3}})",
       R"({"ph":"X","pid":0,"tid":4,"ts":-1,"dur":0.5,"name":"publish","args":{"stage":1,"arg":4,"chain":3}})"});
  REQUIRE(g.tail.size() == 1);
  CHECK(g.tail[0].name == "final");
  CHECK(g.tail[0].n == 1);
  CHECK(g.tail[0].span_ns.p50 == 20000.0);
  CHECK(g.tail[0].lanes.p50 == 4.0);
  CHECK(g.tail[0].idle_pct.p50 == doctest::Approx(30.0));
  CHECK(g.tail[0].tail_pct.p50 == doctest::Approx(30.0));
}

TEST_CASE("gaps: a worker that claims before the publish's recorded end gives a negative first claim, and its min") {
  // Chain 3's publish ends at 10; a worker starts at 7 (-3) and chain 5's at 14 (+2): the
  // mean (-0.5) hides the negative one, the min shows it.
  GapsReport g = gaps_of_events(
      {R"({"ph":"X","pid":0,"tid":0,"ts":7,"dur":5,"name":"chunk","args":{"stage":0,"arg":0,"chain":3}})",
       R"({"ph":"X","pid":0,"tid":0,"ts":24,"dur":5,"name":"chunk","args":{"stage":0,"arg":0,"chain":5}})",
       R"({"ph":"X","pid":0,"tid":1,"ts":0,"dur":10,"name":"publish","args":{"stage":1,"arg":1,"chain":3}})",
       R"({"ph":"X","pid":0,"tid":1,"ts":20,"dur":2,"name":"publish","args":{"stage":1,"arg":1,"chain":5}})"});
  const ChainClass& final_ = cls(g, "1");
  CHECK(final_.first_claim_ns.count == 2);
  CHECK(final_.first_claim_ns.mean == doctest::Approx(-500.0));
  CHECK(final_.first_claim_min_ns == doctest::Approx(-3000.0));
  CHECK(final_.first_claim_ns.max == doctest::Approx(2000.0));
}

TEST_CASE("gaps: quantiles are inclusive by default, never above the max") {
  CHECK(GapsOptions{}.quantiles == QuantileMethod::inclusive);
}

TEST_CASE("gaps groups a chain's chunks by stage whatever their file order") {
  // Chain 3, two stages, chunks written stage 1 first: stage 0 = [0,10] lane 0 and [2,6]
  // lane 1 (busy 14, span 10, last chunk 10); stage 1 = [12,15] lane 0 and [11,16] lane 1
  // (busy 8, span 5, last chunk 5, gap from stage 0: 11 - 10 = 1).
  GapsReport g = gaps_of_events(
      {R"({"ph":"X","pid":0,"tid":0,"ts":12,"dur":3,"name":"chunk","args":{"stage":1,"arg":0,"chain":3}})",
       R"({"ph":"X","pid":0,"tid":0,"ts":0,"dur":10,"name":"chunk","args":{"stage":0,"arg":0,"chain":3}})",
       R"({"ph":"X","pid":0,"tid":1,"ts":11,"dur":5,"name":"chunk","args":{"stage":1,"arg":1,"chain":3}})",
       R"({"ph":"X","pid":0,"tid":1,"ts":2,"dur":4,"name":"chunk","args":{"stage":0,"arg":1,"chain":3}})",
       R"({"ph":"X","pid":0,"tid":1,"ts":-2,"dur":1,"name":"publish","args":{"stage":2,"arg":4,"chain":3}})"});
  REQUIRE(g.classes.size() == 1);
  const ChainClass& c = g.classes[0];
  REQUIRE(c.stages.size() == 2);
  CHECK(c.stages[0].span_ns.p50 == 10000.0);
  CHECK(c.stages[0].busy_ns.p50 == 14000.0);
  CHECK(c.stages[0].last_chunk_ns.p50 == 10000.0);
  CHECK(c.stages[0].gap_from_prev_ns.count == 0);
  CHECK(c.stages[1].span_ns.p50 == 5000.0);
  CHECK(c.stages[1].busy_ns.p50 == 8000.0);
  CHECK(c.stages[1].eff_par.p50 == doctest::Approx(1.6));
  CHECK(c.stages[1].lanes.p50 == 2.0);
  CHECK(c.stages[1].gap_from_prev_ns.p50 == 1000.0);
}

TEST_CASE("gaps over more chains and chunks than one page of its arrays holds") {
  // 70,000 one-stage chains (rows and chunk references span several 65,536-entry pages,
  // released as they are read): chain i publishes at 20i, chunks [20i+2, +3] on lane 0
  // and [20i+3, +4] on lane 1: span 5, busy 7, 2 lanes; the next publish follows 13 later.
  std::vector<std::string> events;
  constexpr int kChains = 70000;
  for (int i = 0; i < kChains; ++i) {
    std::string chain = std::to_string(i + 1), ts = std::to_string(20 * i);
    events.push_back(R"({"ph":"X","pid":0,"tid":0,"ts":)" + std::to_string(20 * i + 2) +
                     R"(,"dur":3,"name":"chunk","args":{"stage":0,"arg":0,"chain":)" + chain + "}}");
    events.push_back(R"({"ph":"X","pid":0,"tid":1,"ts":)" + std::to_string(20 * i + 3) +
                     R"(,"dur":4,"name":"chunk","args":{"stage":0,"arg":1,"chain":)" + chain + "}}");
    events.push_back(R"({"ph":"X","pid":0,"tid":2,"ts":)" + ts +
                     R"(,"dur":1,"name":"publish","args":{"stage":1,"arg":2,"chain":)" + chain + "}}");
  }
  GapsReport g = gaps_of_events(events);
  CHECK(g.chains == kChains);
  REQUIRE(g.classes.size() == 1);
  CHECK(g.classes[0].n == kChains);
  REQUIRE(g.classes[0].stages.size() == 1);
  const StageMetrics& s = g.classes[0].stages[0];
  CHECK(s.span_ns.count == kChains);
  CHECK(s.span_ns.max == 5000.0);
  CHECK(s.busy_ns.p50 == 7000.0);
  CHECK(s.lanes.p99 == 2.0);
  CHECK(g.publish.post_cls_gap_ns.count == kChains - 1);
  CHECK(g.publish.post_cls_gap_ns.max == 13000.0);
}

TEST_CASE("gaps needs no chain table: a model loaded without categories gives the same report") {
  std::ifstream in(std::string(jqtrace::test::kSamplesDir) + "/decode-small.trace.json");
  std::stringstream text;
  text << in.rdbuf();
  Trace full, lean;
  load_string(text.str(), &full);
  auto src = Source::from_string(text.str());
  LoadOptions options;
  options.categories = false;
  load_trace(*src, &lean, nullptr, options);
  CHECK(lean.chains.size() == 0);
  GapsReport a, b;
  std::string error;
  REQUIRE(compute_gaps(full, whole_trace(full), GapsOptions{}, &a, &error));
  REQUIRE(compute_gaps(lean, whole_trace(lean), GapsOptions{}, &b, &error));
  CHECK(a.by == b.by);
  REQUIRE(a.classes.size() == b.classes.size());
  for (std::size_t k = 0; k < a.classes.size(); ++k) {
    CHECK(a.classes[k].name == b.classes[k].name);
    CHECK(a.classes[k].wall_ns.mean == b.classes[k].wall_ns.mean);
    CHECK(a.classes[k].stages.size() == b.classes[k].stages.size());
  }
  CHECK(a.publish.durations.mean == b.publish.durations.mean);
}

namespace {
std::string dump(const Distribution& d) {
  std::ostringstream out;
  out.precision(17);
  out << d.count << ' ' << d.mean << ' ' << d.p50 << ' ' << d.p90 << ' ' << d.p95 << ' ' << d.p99 << ' ' << d.max;
  return out.str();
}
/// The classes and tails of a report, as text: two reports compare whole.
std::string dump(const GapsReport& g) {
  std::ostringstream out;
  for (const ChainClass& c : g.classes) {
    out << c.key << ' ' << c.n << ' ' << dump(c.wall_ns) << ' ' << dump(c.publish_ns) << ' '
        << dump(c.first_claim_ns) << '\n';
    for (const StageMetrics& s : c.stages)
      out << "  " << s.stage << ' ' << dump(s.span_ns) << ' ' << dump(s.busy_ns) << ' ' << dump(s.eff_par) << ' '
          << dump(s.lanes) << ' ' << dump(s.last_chunk_ns) << ' ' << dump(s.gap_from_prev_ns) << '\n';
  }
  for (const TailMetrics& t : g.tail)
    out << t.key << ' ' << t.stage << ' ' << t.n << ' ' << dump(t.span_ns) << ' ' << dump(t.lanes) << ' '
        << dump(t.idle_pct) << ' ' << dump(t.tail_pct) << '\n';
  out << "chains " << g.chains << " wakes " << g.wakes << ' ' << dump(g.wake_dur_ns) << '\n';
  const PublishMetrics& p = g.publish;
  out << "publish " << p.count << ' ' << p.fat_count << ' ' << dump(p.durations) << ' ' << dump(p.post_cls_gap_ns) << ' '
      << dump(p.next_publish_dur_ns) << '\n';
  for (const FatPublish& f : p.fat) out << "  fat " << f.ts_ns << ' ' << f.dur_ns << ' ' << f.chain << '\n';
  for (const LaneGapMetrics& l : g.lanes)
    out << l.lane << ' ' << l.name << ' ' << l.gaps << ' ' << l.idle_ns << ' ' << dump(l.gap_ns) << '\n';
  return out.str();
}

/// gaps of t at one thread and at `threads`, chains measured in runs of `per_run` chunks.
void check_threads_agree(const Trace& t, ClassBy by, unsigned threads, std::size_t per_run) {
  GapsOptions one, many;
  one.by = many.by = by;
  many.threads = threads;
  many.min_chunks_per_run = per_run;
  GapsReport a, b;
  std::string error;
  REQUIRE(compute_gaps(t, whole_trace(t), one, &a, &error));
  REQUIRE(compute_gaps(t, whole_trace(t), many, &b, &error));
  CHECK(!a.classes.empty());
  CHECK(dump(b) == dump(a));
}
}  // namespace

TEST_CASE("gaps on several threads equals one thread's, whatever the runs of chains") {
  for (const char* sample : {"decode-small.trace.json", "tiny.trace.json", "ring-full.trace.json"}) {
    const Trace& t = load_sample(sample);
    for (ClassBy by : {ClassBy::nstages, ClassBy::category})
      for (std::size_t per_run : {std::size_t{1}, std::size_t{7}, std::size_t{1} << 14}) {
        INFO(sample << " by " << static_cast<int>(by) << ", runs of " << per_run << " chunks");
        check_threads_agree(t, by, 3, per_run);
      }
  }
}

TEST_CASE("gaps in runs of chains across pages of its arrays: each run frees only its own pages") {
  // 70,000 chains of 1 to 3 stages on 5 lanes, cut into 8 runs of ~30,000 chunks: the runs
  // meet inside pages of rows and chunk references, which neither run may free (ASan
  // builds catch a read of a freed page).
  std::vector<std::string> events;
  for (int i = 0; i < 70000; ++i) {
    std::string chain = std::to_string(i + 1);
    int stages = 1 + i % 3;
    events.push_back(R"({"ph":"X","pid":0,"tid":9,"ts":)" + std::to_string(40 * i) + R"(,"dur":)" +
                     std::to_string(1 + i % 4) + R"(,"name":"publish","args":{"stage":)" + std::to_string(stages) +
                     R"(,"arg":2,"chain":)" + chain + "}}");
    for (int s = 0; s < stages; ++s)
      for (int lane = 0; lane < 1 + (i + s) % 5; ++lane)
        events.push_back(R"({"ph":"X","pid":0,"tid":)" + std::to_string(lane) + R"(,"ts":)" +
                         std::to_string(40 * i + 2 + 10 * s + lane) + R"(,"dur":)" + std::to_string(3 + (i + lane) % 5) +
                         R"(,"name":"chunk","args":{"stage":)" + std::to_string(s) + R"(,"arg":0,"chain":)" + chain + "}}");
  }
  Trace t;
  load_string(trace_of(events), &t);
  check_threads_agree(t, ClassBy::nstages, 2, 30000);
  check_threads_agree(t, ClassBy::nstages, 3, 1);
}

TEST_CASE("gaps measures class by class, the class with most chunks last: each reads only its own pages") {
  // Class "2" (first in the file) has 4,096 chains, one page of the chain order exactly, so
  // class "1"'s chains start on a page of their own; class "1" has fewer chunks, so it is
  // measured first and frees that page as it goes. Measuring class "2" after it must not
  // read it (a read of a freed page crashes here, and ASan builds name it).
  std::vector<std::string> events;
  auto chunk = [&](int lane, int ts, int stage, int chain) {
    events.push_back(R"({"ph":"X","pid":0,"tid":)" + std::to_string(lane) + R"(,"ts":)" + std::to_string(ts) +
                     R"(,"dur":2,"name":"chunk","args":{"stage":)" + std::to_string(stage) + R"(,"arg":0,"chain":)" +
                     std::to_string(chain) + "}}");
  };
  auto publish = [&](int ts, int stages, int chain) {
    events.push_back(R"({"ph":"X","pid":0,"tid":9,"ts":)" + std::to_string(ts) + R"(,"dur":1,"name":"publish","args":{"stage":)" +
                     std::to_string(stages) + R"(,"arg":2,"chain":)" + std::to_string(chain) + "}}");
  };
  constexpr int kTwoStage = 4096, kOneStage = 9000;
  for (int i = 0; i < kTwoStage; ++i) {
    publish(100 * i, 2, i);
    for (int s = 0; s < 2; ++s)
      for (int lane = 0; lane < 2; ++lane) chunk(lane, 100 * i + 2 + 10 * s, s, i);
  }
  for (int i = 0; i < kOneStage; ++i) {
    int chain = kTwoStage + i;
    publish(100 * chain, 1, chain);
    chunk(0, 100 * chain + 2, 0, chain);
  }
  Trace t;
  load_string(trace_of(events), &t);
  for (unsigned threads : {1u, 2u}) {
    GapsOptions options;
    options.by = ClassBy::nstages;
    options.threads = threads;
    options.min_chunks_per_run = 1000;
    GapsReport g;
    std::string error;
    REQUIRE(compute_gaps(t, whole_trace(t), options, &g, &error));
    REQUIRE(g.classes.size() == 2);
    CHECK(g.classes[0].key == "2");
    CHECK(g.classes[0].n == kTwoStage);
    CHECK(g.classes[0].stages.size() == 2);
    CHECK(g.classes[0].stages[1].span_ns.count == kTwoStage);
    CHECK(g.classes[1].key == "1");
    CHECK(g.classes[1].n == kOneStage);
    CHECK(g.publish.post_cls_gap_ns.count == kOneStage - 1);
  }
  check_threads_agree(t, ClassBy::nstages, 3, 100);
}
