#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "numbers.h"
#include "scope.h"
#include "test_util.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {
/// samples/tiny.trace.json: token markers at 0 and 60 us, the trace ends at 128 us.
const Trace& tiny() { return load_sample("tiny.trace.json"); }
ScopeRequest marker(const char* kind, int64_t first, int64_t last) {
  ScopeRequest r;
  r.kind = ScopeRequest::Kind::marker;
  r.marker_kind = kind;
  r.first_unit = first;
  r.last_unit = last;
  return r;
}
}  // namespace

TEST_CASE("units span from one marker to the next, the last to the trace end") {
  std::vector<Unit> units = units_of(tiny(), "token", UnitAt::start);
  REQUIRE(units.size() == 2);
  CHECK(units[0].range.lo == 0);
  CHECK(units[0].range.hi == 60000);
  CHECK(units[1].arg == 1);
  CHECK(units[1].range.hi == 128000);
  CHECK(units_of(tiny(), "layer", UnitAt::start).empty());
}

TEST_CASE("with --unit-at end a unit runs from the previous marker (or the trace start) to its own") {
  std::vector<Unit> units = units_of(tiny(), "token", UnitAt::end);
  REQUIRE(units.size() == 2);
  CHECK((units[0].range.lo == 0 && units[0].range.hi == 0));  // the first marker is at the start
  CHECK((units[1].range.lo == 0 && units[1].range.hi == 60000));
  CHECK(units[1].arg == 1);  // labelled with its closing marker's arg
}

namespace {
/// A trace from `start` to `end` us with `kind` markers at `at` (us).
std::string marker_trace(int start, int end, const std::vector<int>& at) {
  std::string json = R"({"traceEvents":[)";
  json += R"({"ph":"X","pid":0,"tid":0,"name":"w","ts":)" + std::to_string(start) + R"(,"dur":)" +
          std::to_string(end - start) + "}";
  for (int t : at) json += R"(,{"ph":"i","s":"g","pid":0,"tid":0,"name":"m","ts":)" + std::to_string(t) + "}";
  return json + "]}";
}
UnitAt detected(int start, int end, const std::vector<int>& at) {
  Trace t;
  load_string(marker_trace(start, end, at), &t);
  UnitRule rule = unit_rule(t, "m", UnitAtRequest::automatic);
  CHECK(rule.automatic);
  return rule.at;
}
}  // namespace

TEST_CASE("auto: markers close their units when the trace ends just after the last and begins well before the first") {
  // Closers: the tracer stamps the marker after the unit's work (decode tokens).
  CHECK(detected(0, 1003, {100, 200, 300, 1000}) == UnitAt::end);
  // Starters: the first marker opens the trace (step), or the trace runs on after the last (layer).
  CHECK(detected(0, 1003, {0, 100, 200, 1000}) == UnitAt::start);
  CHECK(detected(0, 1100, {100, 200, 300, 1000}) == UnitAt::start);
  // The boundary: within 5% of a median gap (100 us: 5 us) of the end.
  CHECK(detected(0, 1004, {100, 200, 300, 1000}) == UnitAt::end);
  CHECK(detected(0, 1005, {100, 200, 300, 1000}) == UnitAt::start);
  // One marker says nothing about where it stands: start.
  CHECK(detected(0, 1000, {1000}) == UnitAt::start);
  // A fixed request is taken as it is.
  Trace t;
  load_string(marker_trace(0, 1003, {100, 200, 300, 1000}), &t);
  UnitRule fixed = unit_rule(t, "m", UnitAtRequest::start);
  CHECK((fixed.at == UnitAt::start && !fixed.automatic));
}

TEST_CASE("a marker scope says which rule cut its units, in its label") {
  Trace t;
  load_string(marker_trace(0, 1003, {100, 200, 300, 1000}), &t);
  Scope s;
  std::string err;
  ScopeRequest r = marker("m", 1, 2);
  REQUIRE(resolve_scope(t, r, &s, &err));
  CHECK((s.range.lo == 100000 && s.range.hi == 300000));  // units 1 and 2 end at markers 1 and 2
  CHECK(s.label == "--marker m 1..2 --unit-at end");
  CHECK(s.rule.automatic);
  r.unit_at = UnitAtRequest::start;
  REQUIRE(resolve_scope(t, r, &s, &err));
  CHECK((s.range.lo == 200000 && s.range.hi == 1000000));
  CHECK(s.label == "--marker m 1..2 --unit-at start");
}

TEST_CASE("marker kinds come from the profile, else from instant names") {
  CHECK(marker_kinds(tiny()) == std::vector<std::string>{"token"});
  Trace generic;
  load_string(R"([{"ph":"i","name":"vsync","ts":1},{"ph":"I","name":"frame","ts":2},{"ph":"i","name":"vsync","ts":3}])",
              &generic);
  CHECK(marker_kinds(generic) == std::vector<std::string>{"vsync", "frame"});
}

TEST_CASE("each kind's markers, in time order, from one pass: asked-for kinds only, absent ones empty") {
  Trace t;
  REQUIRE(load_string(R"([{"ph":"i","name":"b","ts":9,"args":{"arg":3}},{"ph":"i","name":"a","ts":1,"args":{"arg":1}},
    {"ph":"X","name":"a","ts":0,"dur":20},{"ph":"i","name":"c","ts":5},{"ph":"i","name":"a","ts":7,"args":{"arg":2}},
    {"ph":"i","name":"b","ts":2,"args":{"arg":4}}])",
                      &t).status == ReadStatus::ok);
  std::vector<std::string> kinds = {"b", "missing", "a"};
  std::vector<std::vector<int64_t>> ts, arg;
  std::vector<std::size_t> order;
  for_each_kind_markers(t, kinds, [&](std::size_t k, const Markers& m) {
    order.push_back(k);
    ts.push_back(m.ts);
    arg.push_back(m.arg);
  });
  CHECK(order == std::vector<std::size_t>{0, 1, 2});
  CHECK(ts == std::vector<std::vector<int64_t>>{{2000, 9000}, {}, {1000, 7000}});
  CHECK(arg == std::vector<std::vector<int64_t>>{{4, 3}, {}, {1, 2}});
  CHECK(marker_counts(t, kinds) == std::vector<uint64_t>{2, 0, 2});
  std::vector<Markers> all = markers_of_kinds(t, kinds);
  REQUIRE(all.size() == 3);
  CHECK(all[2].ts == std::vector<int64_t>{1000, 7000});
  CHECK(marker_kinds(t) == std::vector<std::string>{"a", "b", "c"});  // by first instant in time
}

TEST_CASE("scopes resolve to ranges: whole, units, unit spans, times") {
  Scope s;
  std::string err;
  REQUIRE(resolve_scope(tiny(), ScopeRequest{}, &s, &err));
  CHECK((s.range.lo == 0 && s.range.hi == 128000));
  CHECK(s.label == "whole trace");
  REQUIRE(resolve_scope(tiny(), marker("token", 1, 1), &s, &err));
  CHECK((s.range.lo == 60000 && s.range.hi == 128000));
  REQUIRE(resolve_scope(tiny(), marker("token", 0, 1), &s, &err));
  CHECK((s.range.lo == 0 && s.range.hi == 128000));
  ScopeRequest time;
  time.kind = ScopeRequest::Kind::time;
  time.lo_ns = 25000;
  time.hi_ns = 45000;
  REQUIRE(resolve_scope(tiny(), time, &s, &err));
  CHECK(s.range.length() == 20000);
  CHECK(s.label == "--us 25 45");
}

TEST_CASE("a range entirely outside the trace is an error that gives the trace's range") {
  Scope s;
  std::string err;
  ScopeRequest time;
  time.kind = ScopeRequest::Kind::time;
  time.milliseconds = true;
  time.lo_ns = 500'000'000;
  time.hi_ns = 600'000'000;
  CHECK_FALSE(resolve_scope(tiny(), time, &s, &err));
  CHECK(err == "range 500..600 ms is outside the trace (0 .. 0.128 ms)");
  time.milliseconds = false;
  time.lo_ns = -5000;
  time.hi_ns = -1;
  CHECK_FALSE(resolve_scope(tiny(), time, &s, &err));
  CHECK(err == "range -5..-0.001 us is outside the trace (0 .. 128 us)");
  time.hi_ns = 0;  // touching the start is overlapping it
  CHECK(resolve_scope(tiny(), time, &s, &err));
  time.lo_ns = 100'000;  // partly outside is fine
  time.hi_ns = 900'000;
  CHECK(resolve_scope(tiny(), time, &s, &err));
}

TEST_CASE("a window jqtrace wrote: its recorded range is the whole trace") {
  Trace t;
  load_string(R"({"traceEvents":[{"ph":"X","pid":0,"tid":0,"name":"w","ts":0,"dur":100}],)"
              R"("jqtraceWindow":{"version":1,"source":"big.json","scope":"--us 10 20","lo_us":10,"hi_us":20,)"
              R"("rebased_by_us":0}})",
              &t);
  REQUIRE(t.window.present);
  CHECK(t.window.source == "big.json");
  Scope s;
  std::string err;
  REQUIRE(resolve_scope(t, ScopeRequest{}, &s, &err));
  CHECK((s.range.lo == 10000 && s.range.hi == 20000));
  CHECK((s.window && s.label == "--us 10 20"));
  Trace malformed;  // a record without a usable range is ignored
  load_string(R"({"traceEvents":[],"jqtraceWindow":{"lo_us":"x","hi_us":20}})", &malformed);
  CHECK_FALSE(malformed.window.present);
}

TEST_CASE("scope errors: unknown kind with a suggestion, missing units, inverted range") {
  Scope r;
  std::string err;
  CHECK_FALSE(resolve_scope(tiny(), marker("tokn", 0, 0), &r, &err));
  CHECK(err == "unknown marker kind 'tokn'; did you mean 'token'?");
  CHECK_FALSE(resolve_scope(tiny(), marker("frame", 0, 0), &r, &err));
  CHECK(err == "unknown marker kind 'frame' (kinds: token)");
  CHECK_FALSE(resolve_scope(tiny(), marker("token", 1, 2), &r, &err));
  CHECK(err == "'token' has 2 units (0..1); unit 2 does not exist");
  ScopeRequest time;
  time.kind = ScopeRequest::Kind::time;
  time.lo_ns = 5;
  time.hi_ns = 4;
  CHECK_FALSE(resolve_scope(tiny(), time, &r, &err));
  CHECK(err == "the range's start is after its end");
}

TEST_CASE("unit spans N and N..M") {
  int64_t a = 0, b = 0;
  CHECK((parse_unit_span("3", &a, &b) && a == 3 && b == 3));
  CHECK((parse_unit_span("3..5", &a, &b) && a == 3 && b == 5));
  CHECK_FALSE(parse_unit_span("5..3", &a, &b));
  CHECK_FALSE(parse_unit_span("-1", &a, &b));
  CHECK_FALSE(parse_unit_span("3..", &a, &b));
  CHECK_FALSE(parse_unit_span("x", &a, &b));
}

TEST_CASE("milliseconds on the command line become exact nanoseconds") {
  int64_t ns = 0;
  CHECK((parse_ms_to_ns("1.5", &ns) == NumberStatus::ok && ns == 1500000));
  CHECK((parse_ms_to_ns("1.2345678", &ns) == NumberStatus::ok && ns == 1234568));
  CHECK((parse_ms_to_ns("12", &ns) == NumberStatus::ok && ns == 12000000));
  CHECK((parse_ms_to_ns("2e-3", &ns) == NumberStatus::ok && ns == 2000));
  CHECK(parse_ms_to_ns("1.", &ns) != NumberStatus::ok);
  CHECK(parse_ms_to_ns("abc", &ns) != NumberStatus::ok);
}

TEST_CASE("overlap and clipping follow SPEC section 2") {
  Range r{10, 20};
  CHECK(r.overlaps(20, 30));   // touches at hi
  CHECK(r.overlaps(0, 10));    // touches at lo
  CHECK_FALSE(r.overlaps(21, 30));
  CHECK(r.clipped(5, 15) == 5);
  CHECK(r.clipped(0, 10) == 0);
  CHECK(r.clipped(12, 14) == 2);
}
