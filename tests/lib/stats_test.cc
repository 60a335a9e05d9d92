// Range stats on samples/tiny.trace.json, checked by hand (times in us):
//   worker 0: chunk 10+20 (chain 11), stage_wait 30+5, chunk 40+10 (11), chunk 70+15 (13),
//             wake 90+30, fifo_job 120+8
//   caller 1: publish 5+4 (11: 2 stages, tag 1 "attn chain"), chunk 10+22 (11),
//             stage_wait 32+6, stage_wait 38+12, publish 62+6 (13: 1 stage, tag 3 "ffn chain"),
//             stage_wait 68+17, chunk 100+10 (chain 15: no publish, "std kernel")
//   token markers at 0 and 60; the trace spans [0, 128].
// busy = chunk+fifo_job+publish = worker 20+10+15+8 = 53, caller 4+22+6+10 = 42: 95.
// wait = 5+6+12+17 = 40; idle = 100*(1 - 95/(128*2)) = 62.890625; parallelism 95/128.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>

#include "markers.h"
#include "stats.h"
#include "test_util.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {
const Trace& tiny() { return load_sample("tiny.trace.json"); }
RangeStats stats_of(const Trace& t, Range r, GroupBy by = GroupBy::category, bool hist = false) {
  SpanIndex index(t);
  StatsOptions o;
  o.by = by;
  o.hist = hist;
  return compute_stats(t, index, r, o);
}
const GroupStats& group(const RangeStats& s, const std::string& name) {
  for (const GroupStats& g : s.groups)
    if (g.name == name) return g;
  FAIL("no group " << name);
  return s.groups.front();
}
}  // namespace

TEST_CASE("whole-trace stats of the tiny jobque trace") {
  RangeStats s = stats_of(tiny(), whole_trace(tiny()));
  CHECK(s.lanes == 2);
  CHECK(s.events == 13);
  CHECK(s.busy_ns == 95000);
  CHECK(s.wait_ns == 40000);
  CHECK(s.idle_pct == doctest::Approx(62.890625));
  CHECK(s.parallelism == doctest::Approx(95.0 / 128.0));
  CHECK(s.publishes == 2);
}

TEST_CASE("per category: busy, events, shares and chunk durations") {
  RangeStats s = stats_of(tiny(), whole_trace(tiny()));
  const GroupStats& attn = group(s, "attn chain");
  CHECK(attn.busy_ns == 56000);  // chunks 20 + 10 + 22, publish 4
  CHECK(attn.events == 7);
  CHECK(attn.share_pct == doctest::Approx(100.0 * 56 / 95));
  CHECK(attn.dur.count == 3);
  CHECK(attn.dur.p50 == 20000);
  CHECK(attn.dur.max == 22000);
  CHECK(attn.color == "#5E96DE");
  CHECK(group(s, "ffn chain").busy_ns == 21000);   // chunk 15, publish 6
  CHECK(group(s, "fifo job").busy_ns == 8000);
  CHECK(group(s, "unpublished chain").busy_ns == 10000);  // chain 15's chunk (no publish)
  CHECK(group(s, "wake").events == 1);
  CHECK(group(s, "wake").busy_ns == 0);
  for (const GroupStats& g : s.groups) CHECK(g.name != "other spans");  // listed only where it holds spans
  double shares = 0;
  int64_t busy = 0;
  for (const GroupStats& g : s.groups) {
    shares += g.share_pct;
    busy += g.busy_ns;
  }
  CHECK(shares == doctest::Approx(100.0));
  CHECK(busy == s.busy_ns);
  CHECK(s.groups.front().name == "attn chain");  // by busy, descending
}

TEST_CASE("per lane busy and idle") {
  const Trace& t = tiny();
  RangeStats s = stats_of(t, whole_trace(t));
  REQUIRE(s.lanes_detail.size() == 2);
  CHECK(t.thread_name(s.lanes_detail[0].lane) == "worker 0");
  CHECK(s.lanes_detail[0].busy_ns == 53000);
  CHECK(s.lanes_detail[0].idle_pct == doctest::Approx(100.0 * (1 - 53.0 / 128)));
  CHECK(s.lanes_detail[1].busy_ns == 42000);
}

TEST_CASE("a time range clips events to it") {
  // [25, 45]: worker chunk 10-30 gives 5, stage_wait 30-35 5, chunk 40-50 5; caller chunk
  // 10-32 gives 7, stage_wait 32-38 6, stage_wait 38-50 7.
  RangeStats s = stats_of(tiny(), {25000, 45000});
  CHECK(s.events == 6);
  CHECK(s.busy_ns == 17000);
  CHECK(s.wait_ns == 18000);
  CHECK(s.idle_pct == doctest::Approx(57.5));
  CHECK(s.parallelism == doctest::Approx(0.85));
  CHECK(s.publishes == 0);
}

TEST_CASE("grouping by name, lane and kind") {
  RangeStats by_name = stats_of(tiny(), whole_trace(tiny()), GroupBy::name);
  CHECK(group(by_name, "chunk").busy_ns == 77000);
  CHECK(group(by_name, "chunk").events == 5);
  CHECK(group(by_name, "wake").busy_ns == 0);
  CHECK(group(by_name, "wake").dur.count == 1);
  RangeStats by_lane = stats_of(tiny(), whole_trace(tiny()), GroupBy::lane);
  CHECK(group(by_lane, "0:0").busy_ns == 53000);
  RangeStats by_kind = stats_of(tiny(), whole_trace(tiny()), GroupBy::kind);
  CHECK(group(by_kind, "publish").events == 2);
  CHECK(group(by_kind, "stage_wait").events == 4);
  CHECK(group(by_kind, "other").events == 0);
}

TEST_CASE("histograms: log2 buckets of durations") {
  RangeStats s = stats_of(tiny(), whole_trace(tiny()), GroupBy::category, true);
  const GroupStats& attn = group(s, "attn chain");  // chunks of 10, 20 and 22 us
  REQUIRE(attn.hist.size() == 2);
  CHECK(attn.hist[0].lo_ns == 8192);
  CHECK(attn.hist[0].hi_ns == 16384);
  CHECK(attn.hist[0].count == 1);
  CHECK(attn.hist[1].count == 2);
}

TEST_CASE("a unit's stats equal the stats of its range") {
  SpanIndex index(tiny());
  std::vector<UnitRow> rows = unit_rows(tiny(), index, "token", UnitAt::start);
  REQUIRE(rows.size() == 2);
  // Unit 1 is [60, 128] (the last to the trace's end, SPEC §2 "Units"): worker chunk 15
  // and the fifo job at 120..128; caller publish 6, orphan chunk 10.
  CHECK(rows[1].stats.busy_ns == 39000);
  CHECK(rows[1].stats.events == 6);
  CHECK(rows[1].stats.idle_pct == doctest::Approx(100.0 * (1 - 39.0 / 136)));
  RangeStats direct = stats_of(tiny(), rows[1].unit.range);
  CHECK(direct.busy_ns == rows[1].stats.busy_ns);
  CHECK(direct.events == rows[1].stats.events);
  CHECK(direct.publishes == rows[1].stats.publishes);
  CHECK(direct.idle_pct == rows[1].stats.idle_pct);
  CHECK(rows[0].stats.busy_ns + rows[1].stats.busy_ns == 95000);
}

TEST_CASE("marker kinds: count, first and last, unit durations") {
  std::vector<KindSummary> kinds = summarize_kinds(tiny(), UnitAtRequest::automatic, QuantileMethod::inclusive);
  REQUIRE(kinds.size() == 1);
  CHECK(kinds[0].count == 2);
  CHECK(kinds[0].last_ns == 60000);
  CHECK(kinds[0].unit.p50 == 64000);  // units of 60 and 68 us (the last to the trace's end, 128)
  CHECK(kinds[0].unit.max == 68000);
}

TEST_CASE("generic traces: per-lane union as busy, self time without direct children") {
  Trace t;
  // Lane 1: outer [0,100] holds a [10,40] (which holds b [20,30]) and c [50,60].
  // Lane 2: d [0,50] and e [25,75] overlap without nesting.
  load_string(R"([
    {"ph":"X","name":"outer","cat":"top","ts":0,"dur":100,"pid":1,"tid":1},
    {"ph":"X","name":"a","cat":"mid","ts":10,"dur":30,"pid":1,"tid":1},
    {"ph":"X","name":"b","cat":"leaf","ts":20,"dur":10,"pid":1,"tid":1},
    {"ph":"X","name":"c","cat":"mid","ts":50,"dur":10,"pid":1,"tid":1},
    {"ph":"X","name":"d","cat":"top","ts":0,"dur":50,"pid":1,"tid":2},
    {"ph":"X","name":"e","cat":"top","ts":25,"dur":50,"pid":1,"tid":2}])",
              &t);
  RangeStats s = stats_of(t, whole_trace(t), GroupBy::cat);
  CHECK_FALSE(s.jobque);
  CHECK(s.busy_ns == 100000 + 75000);
  CHECK(s.lanes_detail[1].busy_ns == 75000);
  const GroupStats& top = group(s, "top");
  CHECK(top.total_ns == 200000);
  // outer minus a and c; d gives up the time e overlaps it by (it was counted twice:
  // self 175 us on a lane busy 75 us), e whole.
  CHECK(top.self_ns == 60000 + 25000 + 50000);
  CHECK(group(s, "mid").self_ns == 20000 + 10000);
  CHECK(group(s, "leaf").self_ns == 10000);
  CHECK(top.busy_ns == top.self_ns);
  RangeStats by_name = stats_of(t, whole_trace(t), GroupBy::name);
  CHECK(group(by_name, "outer").self_ns == 60000);
}

namespace {
/// Everything a RangeStats prints, as text: two results compare whole.
std::string dump(const RangeStats& s) {
  std::ostringstream out;
  out.precision(17);
  out << s.range.lo << ' ' << s.range.hi << ' ' << s.lanes << ' ' << s.events << ' ' << s.busy_ns << ' ' << s.wait_ns
      << ' ' << s.idle_pct << ' ' << s.parallelism << ' ' << s.publishes << '\n';
  for (const GroupStats& g : s.groups) {
    out << g.name << ' ' << g.color << ' ' << g.busy_ns << ' ' << g.share_pct << ' ' << g.events << ' '
        << g.total_ns << ' ' << g.self_ns << ' ' << g.dur.count << ' ' << g.dur.mean << ' ' << g.dur.p50 << ' '
        << g.dur.p90 << ' ' << g.dur.p95 << ' ' << g.dur.p99 << ' ' << g.dur.max;
    for (const HistBucket& b : g.hist) out << ' ' << b.lo_ns << '/' << b.count;
    out << '\n';
  }
  for (const LaneStats& l : s.lanes_detail) out << l.lane << ' ' << l.busy_ns << ' ' << l.idle_pct << '\n';
  return out.str();
}
}  // namespace

TEST_CASE("stats split into slices on several threads equal one walk") {
  for (const char* sample : {"decode-small.trace.json", "chrome-small.json", "tiny.trace.json"}) {
    const Trace& t = load_sample(sample);
    SpanIndex index(t);
    Range whole = whole_trace(t);
    Range middle{whole.lo + whole.length() / 3, whole.hi - whole.length() / 3};
    for (GroupBy by : {GroupBy::category, GroupBy::name, GroupBy::lane, GroupBy::kind, GroupBy::cat}) {
      for (Range r : {whole, middle}) {
        StatsOptions one;
        one.by = by;
        one.hist = true;
        StatsOptions split = one;
        split.threads = 3;
        split.slice_rows = 7;
        INFO(sample << " by " << group_by_name(by));
        CHECK(dump(compute_stats(t, index, r, split)) == dump(compute_stats(t, index, r, one)));
      }
    }
  }
}

TEST_CASE("unit rows computed on several threads equal one thread's") {
  const Trace& t = load_sample("decode-small.trace.json");
  SpanIndex index(t);
  for (const std::string& kind : marker_kinds(t)) {
    std::vector<UnitRow> one = unit_rows(t, index, kind, UnitAt::start, 1), three = unit_rows(t, index, kind, UnitAt::start, 3);
    REQUIRE(one.size() == three.size());
    for (std::size_t k = 0; k < one.size(); ++k) {
      CHECK(one[k].unit.range.lo == three[k].unit.range.lo);
      CHECK(dump(one[k].stats) == dump(three[k].stats));
    }
  }
}

TEST_CASE("unit rows a block at a time are the rows of the whole kind, in order") {
  const Trace& t = load_sample("decode-small.trace.json");
  SpanIndex index(t);
  for (const std::string& kind : marker_kinds(t))
    for (std::size_t block : {std::size_t{1}, std::size_t{3}, std::size_t{1024}}) {
      std::vector<UnitRow> all = unit_rows(t, index, kind, UnitAt::start, 2);
      std::size_t k = 0;
      for_each_unit_row(t, index, kind, UnitAt::start, 2, [&](const UnitRow& row) {
        REQUIRE(k < all.size());
        CHECK(row.unit.index == all[k].unit.index);
        CHECK(dump(row.stats) == dump(all[k].stats));
        ++k;
      }, block);
      CHECK(k == all.size());
    }
}

TEST_CASE("stats keyed by thousands of names equal one walk on several threads") {
  // More names than a slice indexes in an array: the slices count groups in a hash table.
  std::string json = "[";
  for (int i = 0; i < 6000; ++i)
    json += R"({"ph":"X","pid":1,"tid":)" + std::to_string(i % 5) + R"(,"ts":)" + std::to_string(i) +
            R"(,"dur":)" + std::to_string(1 + i % 7) + R"(,"name":"n)" + std::to_string(i % 4500) + R"(","cat":"c)" +
            std::to_string(i % 4200) + "\"},";
  json += "]";
  Trace t;
  REQUIRE(load_string(json, &t).status == ReadStatus::ok);
  REQUIRE(t.names.size() > 8000);
  SpanIndex index(t);
  for (GroupBy by : {GroupBy::name, GroupBy::cat}) {
    StatsOptions one;
    one.by = by;
    StatsOptions split = one;
    split.threads = 3;
    split.slice_rows = 500;  // slices of 500 spans or more: a dozen
    RangeStats a = compute_stats(t, index, whole_trace(t), one), b = compute_stats(t, index, whole_trace(t), split);
    CHECK(a.groups.size() == (by == GroupBy::name ? 4500u : 4200u));
    uint64_t events = 0;
    for (const GroupStats& g : a.groups) events += g.events;
    CHECK(events == 6000);
    CHECK(group(a, by == GroupBy::name ? "n0" : "c0").events == 2);  // i = 0 and i = 4500 (or 4200)
    CHECK(dump(b) == dump(a));
  }
}

namespace {
/// The whole trace's stats, grouped by `by`, on `threads` threads.
RangeStats whole_stats(const Trace& t, GroupBy by, unsigned threads) {
  SpanIndex index(t);
  StatsOptions o;
  o.by = by;
  o.threads = threads;
  return compute_stats(t, index, whole_trace(t), o);
}
}  // namespace

TEST_CASE("more groups than a wave: every group summarised once from every slice that saw it") {
  // The groups are summarised 65,536 at a time and a slice is freed once all its groups
  // are: 70,000 names each seen twice, early and late (the later copies reversed, so late
  // slices mix both waves' groups), and 140,000 lanes of one span.
  constexpr int kNames = 70000, kLanes = 100, kPerLane = 2 * kNames / kLanes;
  auto dur_us = [](int name, bool late) { return late ? 10 + name % 3 : 1 + name % 7; };
  std::string json = "[";
  for (int lane = 0; lane < kLanes; ++lane)
    for (int k = 0; k < kPerLane; ++k) {
      bool late = lane >= kLanes / 2;
      int name = late ? kNames - 1 - ((lane - kLanes / 2) * kPerLane + k) : lane * kPerLane + k;
      json += R"({"ph":"X","pid":1,"tid":)" + std::to_string(lane) + R"(,"ts":)" + std::to_string(100 * k) +
              R"(,"dur":)" + std::to_string(dur_us(name, late)) + R"(,"name":"n)" + std::to_string(name) + "\"},";
    }
  json.back() = ']';
  Trace t;
  REQUIRE(load_string(json, &t).status == ReadStatus::ok);
  RangeStats one = whole_stats(t, GroupBy::name, 1), three = whole_stats(t, GroupBy::name, 3);
  REQUIRE(one.groups.size() == std::size_t{kNames});
  CHECK(dump(three) == dump(one));
  std::vector<bool> seen(kNames, false);
  for (const GroupStats& g : one.groups) {
    int name = std::stoi(g.name.substr(1));
    REQUIRE_FALSE(seen[static_cast<std::size_t>(name)]);
    seen[static_cast<std::size_t>(name)] = true;
    int64_t a = dur_us(name, false) * 1000, b = dur_us(name, true) * 1000;
    INFO(g.name);
    CHECK(g.events == 2);
    CHECK(g.total_ns == a + b);
    CHECK(g.dur.count == 2);
    CHECK(g.dur.p50 == static_cast<double>(a + b) / 2);
    CHECK(g.dur.max == static_cast<double>(b));
  }

  constexpr int kOneSpanLanes = 140000;
  json = "[";
  for (int lane = 0; lane < kOneSpanLanes; ++lane)
    json += R"({"ph":"X","pid":1,"tid":)" + std::to_string(lane) + R"(,"ts":)" + std::to_string(lane % 1000) +
            R"(,"dur":)" + std::to_string(1 + lane % 5) + R"(,"name":"s"},)";
  json.back() = ']';
  Trace lanes;
  REQUIRE(load_string(json, &lanes).status == ReadStatus::ok);
  RangeStats s = whole_stats(lanes, GroupBy::lane, 2);
  REQUIRE(s.groups.size() == std::size_t{kOneSpanLanes});
  std::vector<bool> lane_seen(kOneSpanLanes, false);
  for (const GroupStats& g : s.groups) {
    REQUIRE(g.lane < lanes.lanes.size());
    REQUIRE_FALSE(lane_seen[g.lane]);
    lane_seen[g.lane] = true;
    INFO("lane " << g.lane);
    CHECK(g.name == lanes.lane_label(g.lane));
    int64_t dur = lanes.lanes[g.lane].spans.dur[0];
    CHECK(g.events == 1);
    CHECK(g.busy_ns == dur);
    CHECK(g.dur.count == 1);
    CHECK(g.dur.max == static_cast<double>(dur));
  }
}

namespace {
/// A generic trace made to stress the nesting: spans on a few lanes with random starts and
/// lengths (so siblings overlap, children stick out of parents, spans touch), zero
/// durations, equal starts, a handful of cats and names.
std::string tangled_trace(uint32_t seed, int spans, int lanes) {
  XorShift next{seed * 2654435761u + 1};
  std::string json = "[";
  for (int i = 0; i < spans; ++i) {
    int64_t ts = next(4) == 0 ? next(20) * 50 : next(1000);
    int64_t dur = next(5) == 0 ? 0 : next(3) == 0 ? next(400) : next(40);
    json += R"({"ph":"X","pid":1,"tid":)" + std::to_string(next(static_cast<uint64_t>(lanes))) + R"(,"ts":)" +
            std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) + R"(,"name":"n)" + std::to_string(next(6)) +
            R"(","cat":"c)" + std::to_string(next(4)) + "\"},";
  }
  json += R"({"ph":"X","pid":1,"tid":0,"ts":0,"dur":1,"name":"a"}])";
  return json;
}

/// Ranges in time order: lo and hi each sorted, so some are empty (hi < lo), some equal,
/// some touch, some leave gaps and some overlap.
std::vector<Range> ordered_ranges(uint32_t seed, std::size_t n, int64_t lo, int64_t hi) {
  std::vector<int64_t> a, b;
  uint64_t x = seed + 99;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    a.push_back(lo + static_cast<int64_t>((x >> 33) % static_cast<uint64_t>(hi - lo + 1)));
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    b.push_back(lo + static_cast<int64_t>((x >> 33) % static_cast<uint64_t>(hi - lo + 1)));
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::vector<Range> ranges;
  for (std::size_t i = 0; i < n; ++i) ranges.push_back({a[i], b[i]});
  return ranges;
}

/// compute_stats_of_ranges against compute_stats of each range, on 1 and 3 threads.
void check_ranges_as_one_by_one(const Trace& t, const std::vector<Range>& ranges, GroupBy by) {
  SpanIndex index(t);
  StatsOptions o;
  o.by = by;
  o.distributions = false;
  o.lanes = false;
  for (unsigned threads : {1u, 3u}) {
    StatsOptions many = o;
    many.threads = threads;
    std::vector<RangeStats> all = compute_stats_of_ranges(t, index, ranges, many);
    REQUIRE(all.size() == ranges.size());
    for (std::size_t v = 0; v < ranges.size(); ++v) {
      INFO("range " << v << " [" << ranges[v].lo << ", " << ranges[v].hi << "] by " << group_by_name(by) << ", "
                    << threads << " threads");
      CHECK(dump(all[v]) == dump(compute_stats(t, index, ranges[v], o)));
    }
  }
}
}  // namespace

TEST_CASE("stats of ranges in one sweep equal each range's own walk: generic spans, tangled") {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    Trace t;
    REQUIRE(load_string(tangled_trace(seed, 400, 1 + static_cast<int>(seed % 4)), &t).status == ReadStatus::ok);
    Range whole = whole_trace(t);
    for (GroupBy by : {GroupBy::cat, GroupBy::name})
      check_ranges_as_one_by_one(t, ordered_ranges(seed, 40, whole.lo - 20000, whole.hi + 20000), by);
  }
}

/// Nested spans on a few lanes: each span's children tile parts of it, down to `depth`,
/// with overlapping siblings and zero-length spans here and there.
std::string nested_trace(uint32_t seed, int depth) {
  XorShift next{seed * 2654435761u + 7};
  std::string json = "[";
  std::function<void(int, int64_t, int64_t, int)> add = [&](int lane, int64_t ts, int64_t end, int level) {
    json += R"({"ph":"X","pid":1,"tid":)" + std::to_string(lane) + R"(,"ts":)" + std::to_string(ts) + R"(,"dur":)" +
            std::to_string(end - ts) + R"(,"name":"n)" + std::to_string(next(4)) + R"(","cat":"c)" +
            std::to_string(level % 3) + "\"},";
    if (level == depth || end - ts < 2) return;
    for (int64_t at = ts + next(3); at < end;) {
      int64_t len = next(3) == 0 ? (end - ts) : 1 + next(static_cast<uint64_t>(end - at));
      int64_t child_end = std::min(end, at + len);
      add(lane, at, child_end, level + 1);
      at = next(6) == 0 ? at + 1 : child_end + next(3);  // now and then a sibling overlapping it
    }
  };
  for (int lane = 0; lane < 3; ++lane) add(lane, next(50), 2000 + next(200), 0);
  json += R"({"ph":"X","pid":1,"tid":0,"ts":0,"dur":0,"name":"a"}])";
  return json;
}

/// Ranges tiling [lo, hi] in steps of `step` us, as units do (each touches the next), with
/// now and then a zero-length one.
std::vector<Range> tiles(int64_t lo, int64_t hi, int64_t step) {
  std::vector<Range> ranges;
  for (int64_t at = lo; at < hi; at += step) {
    ranges.push_back({at, std::min(hi, at + step)});
    if ((at / step) % 7 == 3) ranges.push_back({ranges.back().hi, ranges.back().hi});
  }
  return ranges;
}

TEST_CASE("self times add up to the busy time, however spans overlap") {
  // Spans that overlap without nesting (P [0,20] holds A [2,10]; B [5,15] starts in A and
  // ends after it; C [14,30] ends past P): every instant of the union is one span's self.
  Trace t;
  load_string(R"([
    {"ph":"X","name":"P","ts":0,"dur":20,"pid":1,"tid":1},
    {"ph":"X","name":"A","ts":2,"dur":8,"pid":1,"tid":1},
    {"ph":"X","name":"B","ts":5,"dur":10,"pid":1,"tid":1},
    {"ph":"X","name":"C","ts":14,"dur":16,"pid":1,"tid":1}])",
              &t);
  RangeStats s = stats_of(t, whole_trace(t), GroupBy::name);
  CHECK(s.busy_ns == 30000);
  int64_t self = 0;
  for (const GroupStats& g : s.groups) self += g.self_ns;
  CHECK(self == s.busy_ns);
  CHECK(group(s, "P").self_ns == 2000);  // 0-2; A, B and C cover 2-20
  CHECK(group(s, "A").self_ns == 3000);  // 2-5
  CHECK(group(s, "B").self_ns == 9000);  // 5-14
  CHECK(group(s, "C").self_ns == 16000);
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    Trace tangled;
    REQUIRE(load_string(tangled_trace(seed, 400, 1 + static_cast<int>(seed % 4)), &tangled).status == ReadStatus::ok);
    for (Range r : {whole_trace(tangled), Range{whole_trace(tangled).lo + 1000, whole_trace(tangled).hi / 2}}) {
      RangeStats st = stats_of(tangled, r, GroupBy::name);
      int64_t sum = 0;
      for (const GroupStats& g : st.groups) sum += g.self_ns;
      CHECK(sum == st.busy_ns);
    }
  }
}

TEST_CASE("stats of ranges in one sweep equal each range's own walk: deep nesting over small units") {
  // Spans covering many units whole, children covering some of them and meeting others in
  // part: the sweep adds a covered run once, and self time where no child covers.
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    Trace t;
    REQUIRE(load_string(nested_trace(seed, 3 + static_cast<int>(seed % 4)), &t).status == ReadStatus::ok);
    Range whole = whole_trace(t);
    for (int64_t step_us : {3, 17, 150}) {
      INFO("seed " << seed << ", units of " << step_us << " us");
      for (GroupBy by : {GroupBy::cat, GroupBy::name})
        check_ranges_as_one_by_one(t, tiles(whole.lo - 5000, whole.hi + 5000, step_us * 1000), by);
    }
    check_ranges_as_one_by_one(t, ordered_ranges(seed, 60, whole.lo, whole.hi), GroupBy::cat);
  }
  // The tangled traces over units as well, and a jobque sample's spans over tiles.
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    Trace t;
    REQUIRE(load_string(tangled_trace(seed, 400, 2), &t).status == ReadStatus::ok);
    Range whole = whole_trace(t);
    check_ranges_as_one_by_one(t, tiles(whole.lo, whole.hi, 7000), GroupBy::cat);
  }
  const Trace& jobque = load_sample("decode-small.trace.json");
  Range whole = whole_trace(jobque);
  for (int64_t parts : {40, 400})
    check_ranges_as_one_by_one(jobque, tiles(whole.lo, whole.hi, std::max<int64_t>(1, whole.length() / parts)),
                               GroupBy::category);
}

TEST_CASE("stats of ranges in one sweep equal each range's own walk: units of jobque and Chrome samples") {
  for (const char* sample : {"decode-small.trace.json", "tiny.trace.json", "chrome-small.json"}) {
    const Trace& t = load_sample(sample);
    INFO(sample);
    for (const std::string& kind : marker_kinds(t))
      for (UnitAt at : {UnitAt::start, UnitAt::end}) {
        std::vector<Range> all, some;
        for (const Unit& u : units_of(t, kind, at)) all.push_back(u.range);
        for (std::size_t v = 0; v < all.size(); v += 3) some.push_back(all[v]);  // with gaps between
        for (GroupBy by : {t.jobque ? GroupBy::category : GroupBy::cat, GroupBy::kind, GroupBy::name}) {
          check_ranges_as_one_by_one(t, all, by);
          check_ranges_as_one_by_one(t, some, by);
        }
      }
    Range whole = whole_trace(t);
    check_ranges_as_one_by_one(t, ordered_ranges(7, 30, whole.lo, whole.hi), GroupBy::category);
  }
}

TEST_CASE("stats of ranges out of time order are measured one by one, alike") {
  const Trace& t = load_sample("decode-small.trace.json");
  Range whole = whole_trace(t);
  std::vector<Range> ranges = ordered_ranges(3, 20, whole.lo, whole.hi);
  std::reverse(ranges.begin(), ranges.end());
  ranges.push_back(whole);  // contains the others
  check_ranges_as_one_by_one(t, ranges, GroupBy::category);
}

TEST_CASE("the span index built on threads is the one built on one") {
  // Two lanes, one longer than a stretch of blocks the threads take (4096 blocks of 64
  // spans): long spans early in it must still make later blocks' candidates.
  Trace t;
  t.lanes.resize(2);
  for (int64_t i = 0; i < 300000; ++i) {
    SpanTable& s = t.lanes[0].spans;
    s.ts.push(i * 10);
    s.dur.push(i % 50000 == 7 ? 2000000 : 5);  // a few spans that outlast many blocks
  }
  for (int64_t i = 0; i < 1000; ++i) {
    t.lanes[1].spans.ts.push(i * 3);
    t.lanes[1].spans.dur.push(1);
  }
  SpanIndex one(t, 1), many(t, 4);
  bool same = true;
  for (std::size_t lane = 0; lane < 2; ++lane)
    for (int64_t lo = -5; lo < 3100000; lo += 997) same = same && one.first_candidate(lane, lo) == many.first_candidate(lane, lo);
  CHECK(same);
  // A span from 500,070 to 2,500,075 reaches past blocks that start after 2,000,000.
  CHECK(many.first_candidate(0, 2400000) <= 50007);
}
