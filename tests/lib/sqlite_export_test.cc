// export's own checks of the order its keys come in: a model whose lane is out of time
// order (a loader bug) fails the export with a message, never a database whose index is
// out of order (spans and spans_by_chain are checked on the model's values, not records).
#include <doctest/doctest.h>

#include "sqlite_export.h"
#include "test_util.h"

namespace jqtrace {
namespace {

TEST_CASE("export: a lane out of time order fails the run, not the database's order") {
  for (bool out_of_order : {false, true}) {
    CAPTURE(out_of_order);
    Trace trace;
    REQUIRE(test::load_string(test::sample_bytes("decode-small.trace.json"), &trace).status == ReadStatus::ok);
    SpanTable& spans = trace.lanes[0].spans;
    REQUIRE(spans.size() >= 2);
    if (out_of_order) {
      int64_t first = spans.ts[0];
      spans.ts.set(0, spans.ts[1] + 1);  // the first span now starts after the second
      REQUIRE(spans.ts[0] > first);
    }
    test::TempFile at("");
    std::string error;
    auto db = SqliteExport::create(at.path, &error);
    REQUIRE(db);
    ExportRun run;
    run.file = "decode-small.trace.json";
    bool added = db->add_run(trace, run, 2, &error);
    CHECK(added == !out_of_order);
    if (out_of_order) CHECK(error == "internal error: the spans of lane 0 are not in time order");
    else CHECK(db->finish(&error));
  }
}

}  // namespace
}  // namespace jqtrace
