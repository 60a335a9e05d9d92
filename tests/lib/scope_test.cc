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
  std::vector<Unit> units = units_of(tiny(), "token");
  REQUIRE(units.size() == 2);
  CHECK(units[0].range.lo == 0);
  CHECK(units[0].range.hi == 60000);
  CHECK(units[1].arg == 1);
  CHECK(units[1].range.hi == 128000);
  CHECK(units_of(tiny(), "layer").empty());
}

TEST_CASE("marker kinds come from the profile, else from instant names") {
  CHECK(marker_kinds(tiny()) == std::vector<std::string>{"token"});
  Trace generic;
  load_string(R"([{"ph":"i","name":"vsync","ts":1},{"ph":"I","name":"frame","ts":2},{"ph":"i","name":"vsync","ts":3}])",
              &generic);
  CHECK(marker_kinds(generic) == std::vector<std::string>{"vsync", "frame"});
}

TEST_CASE("scopes resolve to ranges: whole, units, unit spans, times") {
  Range r;
  std::string err;
  REQUIRE(resolve_scope(tiny(), ScopeRequest{}, &r, &err));
  CHECK((r.lo == 0 && r.hi == 128000));
  REQUIRE(resolve_scope(tiny(), marker("token", 1, 1), &r, &err));
  CHECK((r.lo == 60000 && r.hi == 128000));
  REQUIRE(resolve_scope(tiny(), marker("token", 0, 1), &r, &err));
  CHECK((r.lo == 0 && r.hi == 128000));
  ScopeRequest time;
  time.kind = ScopeRequest::Kind::time;
  time.lo_ns = 25000;
  time.hi_ns = 45000;
  REQUIRE(resolve_scope(tiny(), time, &r, &err));
  CHECK(r.length() == 20000);
}

TEST_CASE("scope errors: unknown kind with a suggestion, missing units, inverted range") {
  Range r;
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
