#include "window_record.h"

#include <doctest/doctest.h>

#include "test_util.h"

namespace jqtrace {

TEST_CASE("jqtraceWindow round trip: what window writes, the reader reads back equal") {
  WindowRecord written;
  written.present = true;
  written.source = "dir/big \"trace\".json";  // quotes and a space must survive
  written.scope = "--marker token 3 --unit-at end";
  written.lo_ns = 9378887;
  written.hi_ns = 24619743;
  written.rebased_by_ns = -1500;
  std::string trace = R"({"traceEvents":[{"ph":"X","name":"a","pid":0,"tid":0,"ts":10000,"dur":1}],)"
                      R"("jqtraceWindow":)" + window_record_json(written) + "}";
  Trace t;
  test::load_string(trace, &t);
  const WindowRecord& read = t.window;
  CHECK(read.present);
  CHECK(read.source == written.source);
  CHECK(read.scope == written.scope);
  CHECK(read.lo_ns == written.lo_ns);
  CHECK(read.hi_ns == written.hi_ns);
  CHECK(read.rebased_by_ns == written.rebased_by_ns);
}

TEST_CASE("jqtraceWindow: each kind's rule and the source's number of its first marker read back") {
  WindowRecord written;
  written.present = true;
  written.lo_ns = 1000;
  written.hi_ns = 2000;
  written.units = {{"token", true, "", false, 3}, {"layer", false, "token", false, 96}, {"step", false, "", true, 0}};
  std::string json = window_record_json(written);
  CHECK(json.find(R"("first_marker":{"token":3,"layer":96,"step":0})") != std::string::npos);
  Trace t;
  test::load_string(R"({"traceEvents":[],"jqtraceWindow":)" + json + "}", &t);
  REQUIRE(t.window.units.size() == 3);
  CHECK(t.window.units[0].first_marker == 3);
  CHECK(t.window.units[1].first_marker == 96);
  CHECK(t.window.units[1].nested_in == "token");
  CHECK(t.window.units[2].ambiguous);
  // A record from before first_marker, or one whose value is not a count: numbered from 0.
  test::load_string(R"({"traceEvents":[],"jqtraceWindow":{"lo_us":1,"hi_us":2,"units":{"token":"end"},)"
                    R"("first_marker":{"token":-4}}})", &t);
  REQUIRE(t.window.units.size() == 1);
  CHECK(t.window.units[0].first_marker == 0);
}

}  // namespace jqtrace
