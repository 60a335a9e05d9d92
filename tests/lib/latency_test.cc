// latency (SPEC §2 "Latency") on hand-made traces whose parts are known, and the one
// property every range of every trace must keep: the parts add up to its length.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include <cstring>

#include "latency.h"
#include "test_util.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {

std::string span(int tid, double ts, double dur, const char* name, int stage, int arg, int chain) {
  return fmt::format(R"({{"ph":"X","pid":0,"tid":{},"ts":{},"dur":{},"name":"{}","args":{{"stage":{},"arg":{},"chain":{}}}}})",
                     tid, ts, dur, name, stage, arg, chain);
}
std::string marker(int tid, double ts, const char* kind, int arg) {
  return fmt::format(R"({{"ph":"i","s":"g","pid":0,"tid":{},"ts":{},"name":"{}","args":{{"arg":{}}}}})", tid, ts, kind,
                     arg);
}

/// The parts of a trace's whole range (or r), on its marker lane.
struct Measured {
  Trace trace;
  std::unique_ptr<SpanIndex> index;
  std::unique_ptr<LatencyAnalysis> analysis;
  LatencyParts parts;

  explicit Measured(const std::string& json, const Range* r = nullptr) {
    load_string(json, &trace);
    index = std::make_unique<SpanIndex>(trace);
    std::size_t lane = latency_lane(trace, "");
    REQUIRE(lane != SIZE_MAX);
    Range range = r ? *r : whole_trace(trace);
    analysis = std::make_unique<LatencyAnalysis>(trace, *index, lane, range);
    parts = analysis->measure(range, 10);
  }
  std::size_t group(const std::string& name) const {
    for (std::size_t g = 0; g < analysis->groups().size(); ++g)
      if (analysis->groups()[g].name == name) return g;
    FAIL("no group " << name);
    return 0;
  }
  int64_t at(const std::string& group_name, LatencyClass c) const { return parts.at(group(group_name), c); }
};

// Caller tid 1, worker tid 0, µs. Chain 2 (attn chain, 1 stage): publish 0..10 (long),
// the caller's chunk 10..15, the worker's straggler 11..36, the caller waits 15..38:
// imbalance 15..36 (21), wake-up 36..38 (2). Outside 38..40. Chain 4 (ffn chain): publish
// 40..41, the worker's chunk 41..45, the caller waits 41..60: imbalance 4, then a late
// wake-up 45..60 (15). A wake span 60..65; a wait on chain 6, which no chunk ran, 65..70;
// the worker's fifo job runs to 80, the trace's end: outside 70..80.
std::vector<std::string> known_events() {
  return {marker(1, 0, "token", 0),
          span(1, 0, 10, "publish", 257, 2, 2),
          span(1, 10, 5, "chunk", 0, 0, 2),
          span(0, 11, 25, "chunk", 0, 1, 2),
          span(1, 15, 23, "stage_wait", 0, 0, 2),
          span(1, 40, 1, "publish", 3 * 256 + 1, 1, 4),
          span(0, 41, 4, "chunk", 0, 0, 4),
          span(1, 41, 19, "stage_wait", 0, 0, 4),
          span(1, 60, 5, "wake", 0, 1, 0),
          span(1, 65, 5, "stage_wait", 0, 0, 6),
          span(0, 70, 10, "fifo_job", 0, 0, 0)};
}

}  // namespace

TEST_CASE("latency: a straggler, a late wake-up and a long publish, each in its part") {
  Measured m(trace_of(known_events(), kProfile));
  CHECK(m.trace.lane_label(m.analysis->lane()) == "0:1");
  const int64_t us = 1000;
  CHECK(m.parts.range.length() == 80 * us);
  CHECK(m.parts.total() == 80 * us);
  CHECK(m.at("attn chain", LatencyClass::publish) == 10 * us);
  CHECK(m.at("attn chain", LatencyClass::work) == 5 * us);
  CHECK(m.at("attn chain", LatencyClass::imbalance) == 21 * us);
  CHECK(m.at("attn chain", LatencyClass::wake_up) == 2 * us);
  CHECK(m.at("ffn chain", LatencyClass::publish) == 1 * us);
  CHECK(m.at("ffn chain", LatencyClass::imbalance) == 4 * us);
  CHECK(m.at("ffn chain", LatencyClass::wake_up) == 15 * us);
  CHECK(m.at("wake", LatencyClass::span) == 5 * us);
  CHECK(m.at("unpublished chain", LatencyClass::wait) == 5 * us);
  CHECK(m.at("outside", LatencyClass::outside) == 12 * us);
  CHECK(m.parts.of_class(LatencyClass::not_recorded) == 0);
  // The waits, longest first, with the chunk that ended last.
  REQUIRE(m.parts.waits.size() == 2);
  const LatencyWait& w = m.parts.waits[0];
  CHECK(w.ns == 21 * us);
  CHECK(w.wake_ns == 2 * us);
  CHECK(w.ts_ns == 15 * us);
  CHECK(w.chain == 2);
  CHECK(m.trace.lane_label(w.last_lane) == "0:0");
  CHECK(w.last_chunk_arg == 1);
  CHECK(w.last_chunk_dur == 25 * us);
  CHECK(w.last_chunk_ts - w.stage_first_ts == 1 * us);  // the straggler started 1 us after the caller's chunk
  CHECK(m.parts.waits[1].ns == 4 * us);
  CHECK(m.parts.waits[1].chain == 4);
}

TEST_CASE("latency: a range cuts the parts at its edges, and a stage's end outside it still splits its wait") {
  Range r{20'000, 50'000};
  Measured m(trace_of(known_events(), kProfile), &r);
  const int64_t us = 1000;
  CHECK(m.parts.total() == 30 * us);
  CHECK(m.parts.of_class(LatencyClass::imbalance) == (16 + 4) * us);
  CHECK(m.parts.of_class(LatencyClass::wake_up) == (2 + 5) * us);
  CHECK(m.parts.of_class(LatencyClass::outside) == 2 * us);
  CHECK(m.parts.of_class(LatencyClass::publish) == 1 * us);
  // The straggler ended at 36, inside; a range from 37 on sees only wake-up of that wait.
  Range late{37'000, 39'000};
  Measured n(trace_of(known_events(), kProfile), &late);
  CHECK(n.parts.of_class(LatencyClass::wake_up) == 1 * us);
  CHECK(n.parts.of_class(LatencyClass::imbalance) == 0);
  CHECK(n.parts.of_class(LatencyClass::outside) == 1 * us);
  CHECK(n.parts.waits.empty());
}

TEST_CASE("latency: after the marker lane's ring filled, its time is not recorded, not outside") {
  // The caller publishes 0..100 us and stops; the worker records on to 5000 us.
  std::vector<std::string> events = {marker(1, 0, "token", 0), span(1, 0, 100, "publish", 257, 1, 2),
                                     span(0, 100, 10, "chunk", 0, 0, 2), span(0, 4990, 10, "fifo_job", 0, 0, 0)};
  Measured m(trace_of(events, kProfile));
  REQUIRE(m.analysis->stopped());
  CHECK(m.analysis->stop_ns() == 100'000);
  CHECK(m.parts.of_class(LatencyClass::publish) == 100'000);
  CHECK(m.parts.at(m.analysis->not_recorded_group(), LatencyClass::not_recorded) == 4'900'000);
  CHECK(m.parts.of_class(LatencyClass::outside) == 0);
  CHECK(m.parts.total() == 5'000'000);
  // A lane that merely idles at the end (the trace ends 0.5 ms later) is outside there.
  events.back() = span(0, 590, 10, "fifo_job", 0, 0, 0);
  Measured idle(trace_of(events, kProfile));
  CHECK_FALSE(idle.analysis->stopped());
  CHECK(idle.parts.of_class(LatencyClass::outside) == 500'000);
  CHECK(idle.parts.of_class(LatencyClass::not_recorded) == 0);
}

TEST_CASE("latency: overlapping spans on the lane count their time once, for the earlier span") {
  std::vector<std::string> events = {marker(1, 0, "token", 0), span(1, 0, 10, "chunk", 0, 0, 2),
                                     span(1, 5, 15, "chunk", 0, 1, 2), span(1, 4, 2, "publish", 257, 1, 2),
                                     span(0, 0, 30, "fifo_job", 0, 0, 0)};
  Measured m(trace_of(events, kProfile));
  CHECK(m.parts.of_class(LatencyClass::work) == 20'000);
  CHECK(m.parts.of_class(LatencyClass::publish) == 0);  // inside the chunk that started first
  CHECK(m.parts.of_class(LatencyClass::outside) == 10'000);
  CHECK(m.parts.total() == 30'000);
}

TEST_CASE("latency on a generic trace: the marker lane's top-level spans by cat, class span") {
  std::string json = R"({"traceEvents":[
    {"ph":"i","s":"t","pid":1,"tid":7,"ts":0,"name":"frame"},
    {"ph":"X","pid":1,"tid":7,"ts":0,"dur":10,"name":"load","cat":"io"},
    {"ph":"X","pid":1,"tid":7,"ts":2,"dur":3,"name":"parse","cat":"cpu"},
    {"ph":"X","pid":1,"tid":7,"ts":20,"dur":10,"name":"draw","cat":"cpu"},
    {"ph":"X","pid":1,"tid":8,"ts":0,"dur":40,"name":"other","cat":"gpu"}]})";
  Measured m(json);
  CHECK(m.trace.lane_label(m.analysis->lane()) == "1:7");
  CHECK(m.at("io", LatencyClass::span) == 10'000);
  CHECK(m.at("cpu", LatencyClass::span) == 10'000);  // draw only: parse is inside load
  CHECK(m.parts.of_class(LatencyClass::outside) == 20'000);
  CHECK(m.parts.of_class(LatencyClass::imbalance) == 0);
  CHECK(m.parts.total() == 40'000);
}

TEST_CASE("latency: the marker lane is the one holding the markers, else a jobque trace's caller") {
  std::vector<std::string> events = {span(1, 0, 10, "chunk", 0, 0, 2), span(2, 0, 10, "chunk", 0, 1, 2),
                                     span(0, 0, 10, "publish", 257, 2, 2)};
  Trace t;
  load_string(trace_of(events, kProfile), &t);
  CHECK(t.lane_label(latency_lane(t, "")) == "0:2");  // no markers: the highest tid with spans
  events.push_back(marker(0, 5, "token", 0));
  Trace u;
  load_string(trace_of(events, kProfile), &u);
  CHECK(u.lane_label(latency_lane(u, "")) == "0:0");
  CHECK(u.lane_label(latency_lane(u, "token")) == "0:0");
}

TEST_CASE("latency class names read back, with '_' for the spaces and dashes") {
  for (std::size_t k = 0; k < kLatencyClasses; ++k) {
    LatencyClass c{};
    REQUIRE(parse_latency_class(latency_class_name(static_cast<LatencyClass>(k)), &c));
    CHECK(static_cast<std::size_t>(c) == k);
  }
  LatencyClass c{};
  CHECK(parse_latency_class("wake_up", &c));
  CHECK(c == LatencyClass::wake_up);
  CHECK(parse_latency_class("not_recorded", &c));
  CHECK(c == LatencyClass::not_recorded);
  CHECK_FALSE(parse_latency_class("wakeup", &c));
}

TEST_CASE("latency: the parts of every unit and of random ranges add up to their lengths, on the samples") {
  for (const char* sample : {"decode-small.trace.json", "legacy-small.trace.json", "ring-full.trace.json",
                             "tiny.trace.json", "chrome-small.json", "single-lane.trace.json"}) {
    CAPTURE(sample);
    const Trace& t = load_sample(sample);
    std::size_t lane = latency_lane(t, "");
    if (lane == SIZE_MAX) continue;
    SpanIndex index(t);
    Range whole = whole_trace(t);
    LatencyAnalysis a(t, index, lane, whole);
    LatencyParts all = a.measure(whole, 10);
    CHECK(all.total() == whole.length());
    for (int64_t v : all.ns) CHECK(v >= 0);
    for (const std::string& kind : marker_kinds(t))
      for (const Unit& u : units_of(t, kind, UnitRequest{})) CHECK(a.measure(u.range, 0).total() == u.range.length());
    XorShift rng{0x9E3779B97F4A7C15ull};
    for (int k = 0; k < 200; ++k) {
      uint64_t span = static_cast<uint64_t>(whole.length()) + 1;
      int64_t x = whole.lo + rng(span), y = whole.lo + rng(span);
      Range r{std::min(x, y), std::max(x, y)};
      LatencyParts p = a.measure(r, 3);
      CHECK(p.total() == r.length());
      CHECK(p.waits.size() <= 3);
    }
  }
}

TEST_CASE("latency: on a flat lane, work and publish are the lane's own chunks and publishes, added up") {
  const Trace& t = load_sample("decode-small.trace.json");
  std::size_t lane = latency_lane(t, "");
  SpanIndex index(t);
  LatencyAnalysis a(t, index, lane, whole_trace(t));
  LatencyParts p = a.measure(whole_trace(t), 0);
  JobqueNames names = JobqueNames::found(t.names);
  const SpanTable& s = t.lanes[lane].spans;
  int64_t chunks = 0, publishes = 0, waits = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    REQUIRE((i == 0 || s.ts[i] >= s.end(i - 1)));  // the sample's caller is flat: no overlap to resolve
    if (s.name[i] == names.chunk) chunks += s.dur[i];
    if (s.name[i] == names.publish) publishes += s.dur[i];
    if (s.name[i] == names.stage_wait) waits += s.dur[i];
  }
  CHECK(p.of_class(LatencyClass::work) == chunks);
  CHECK(p.of_class(LatencyClass::publish) == publishes);
  CHECK(p.of_class(LatencyClass::imbalance) + p.of_class(LatencyClass::wake_up) + p.of_class(LatencyClass::wait) == waits);
}

TEST_CASE("latency: chain ids spread out (not the tracer's dense numbering) give the same parts") {
  // The known trace's chains 2, 4 and 6 as 2e12, 4e12 and 6e12: stage ends come from the
  // hash table instead of the array a chain id.
  std::vector<std::string> events = known_events();
  for (std::string& e : events)
    for (const char* chain : {"\"chain\":2}", "\"chain\":4}", "\"chain\":6}"})
      if (auto at = e.find(chain); at != std::string::npos) e.insert(at + std::strlen(chain) - 1, "000000000000");
  Measured dense(trace_of(known_events(), kProfile));
  Measured spread(trace_of(events, kProfile));
  CHECK(spread.parts.ns == dense.parts.ns);
  REQUIRE(spread.parts.waits.size() == 2);
  CHECK(spread.parts.waits[0].chain == 2'000'000'000'000);
  CHECK(spread.parts.waits[0].ns == dense.parts.waits[0].ns);
  CHECK(spread.parts.waits[0].last_chunk_dur == dense.parts.waits[0].last_chunk_dur);
}

TEST_CASE("latency: a wait on a stage the tracer cannot have (stage 9) is a wait, never looked up") {
  std::vector<std::string> events = {marker(1, 0, "token", 0), span(1, 0, 10, "stage_wait", 9, 0, 2),
                                     span(0, 0, 5, "chunk", 9, 0, 2), span(0, 0, 20, "fifo_job", 0, 0, 0)};
  Measured m(trace_of(events, kProfile));
  CHECK(m.parts.of_class(LatencyClass::wait) == 10'000);
  CHECK(m.parts.of_class(LatencyClass::imbalance) == 0);
  CHECK(m.parts.total() == 20'000);
}

TEST_CASE("latency: the longest publishes and own chunks, longest first, are the lane's and add up to their classes") {
  const Trace& t = load_sample("decode-small.trace.json");
  std::size_t lane = latency_lane(t, "");
  SpanIndex index(t);
  Range whole = whole_trace(t);
  LatencyAnalysis a(t, index, lane, whole);
  // Room for every piece: they are then all of the class's time, each once.
  LatencyParts all = a.measure(whole, 100000);
  int64_t publishes = 0, chunks = 0;
  for (const LatencyPiece& p : all.publishes) publishes += p.ns;
  for (const LatencyPiece& p : all.own_chunks) chunks += p.ns;
  CHECK(publishes == all.of_class(LatencyClass::publish));
  CHECK(chunks == all.of_class(LatencyClass::work));
  // Kept to 5: the 5 longest of those, longest first (ties: the earlier).
  LatencyParts five = a.measure(whole, 5);
  REQUIRE(five.publishes.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(five.publishes[i].ns == all.publishes[i].ns);
    CHECK(five.publishes[i].ts_ns == all.publishes[i].ts_ns);
    if (i > 0) CHECK(five.publishes[i - 1].ns >= five.publishes[i].ns);
  }
  CHECK(five.own_chunks.front().ns == all.own_chunks.front().ns);
  CHECK(a.measure(whole, 0).publishes.empty());  // none asked, none kept
}
