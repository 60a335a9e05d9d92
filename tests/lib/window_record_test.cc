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

}  // namespace jqtrace
