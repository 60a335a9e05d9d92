#include <doctest/doctest.h>

#include "test_util.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {
const char* kChunk = R"({"ph":"X","pid":0,"tid":%d,"ts":%s,"dur":%s,"name":"%s","args":{"stage":%d,"arg":%d,"chain":%d}})";
std::string span(int tid, const char* ts, const char* dur, const char* name, int stage, int arg, int chain) {
  char buf[256];
  std::snprintf(buf, sizeof buf, kChunk, tid, ts, dur, name, stage, arg, chain);
  return buf;
}
}  // namespace

TEST_CASE("lanes in order of appearance / spans sorted by time with ties in file order") {
  Trace t;
  load_string(trace_of({span(1, "5.0", "1.0", "chunk", 0, 0, 9), span(1, "2.0", "1.0", "chunk", 0, 1, 9),
                        span(0, "3.0", "1.0", "chunk", 0, 2, 9), span(1, "2.0", "0.5", "wake", 0, 1, 0)}),
              &t);
  REQUIRE(t.lanes.size() == 2);
  CHECK(t.lanes[0].tid.number == 1);
  const SpanTable& s = t.lanes[0].spans;
  REQUIRE(s.size() == 3);
  CHECK(s.ts[0] == 2000);
  CHECK(s.arg[0] == 1);                        // the chunk at 2.0 came first in the file
  CHECK(t.names.view(static_cast<uint32_t>(s.name[1])) == "wake");
  CHECK(s.ts[2] == 5000);
  CHECK(t.start_ns == 2000);
  CHECK(t.end_ns == 6000);
}

TEST_CASE("chunks read before their publish take the publish's category") {
  Trace t;
  load_string(trace_of({span(0, "10", "2", "chunk", 1, 0, 17), span(0, "12", "1", "stage_wait", 1, 0, 17),
                        span(0, "20", "2", "chunk", 0, 0, 19), span(0, "30", "1", "wake", 0, 1, 0),
                        span(1, "8", "1", "publish", 2 | (3 << 8), 4, 17)},
                       kProfile),
              &t);
  CHECK(t.jobque);
  REQUIRE(t.chains.find(17));
  CHECK(t.chains.find(17)->nstages == 2);
  CHECK(t.chains.find(17)->tag == 3);
  auto category = [&](std::size_t lane, std::size_t i) {
    return t.categories[static_cast<std::size_t>(t.lanes[lane].spans.category[i])].name;
  };
  CHECK(category(0, 0) == "ffn chain");   // chunk of chain 17
  CHECK(category(0, 1) == "ffn chain");   // its stage_wait
  CHECK(category(0, 2) == "unpublished chain");  // chain 19 has no publish
  CHECK(category(0, 3) == "wake");
  CHECK(category(1, 0) == "ffn chain");   // the publish itself
  CHECK(t.categories[kOtherSpansCategory].name == "other spans");
  CHECK(t.attribution == Attribution::profile);
}

TEST_CASE("each group no profile names holds only its own: wake, fifo job, unpublished chain, untagged, other spans") {
  Trace t;
  load_string(trace_of({span(0, "10", "2", "chunk", 0, 0, 17), span(0, "20", "2", "chunk", 0, 0, 19),
                        span(0, "30", "1", "wake", 0, 1, 0), span(0, "40", "3", "fifo_job", 0, 0, 0),
                        span(0, "50", "1", "decode", 0, 0, 0), span(1, "8", "1", "publish", 1, 1, 17)},
                       kProfile),
              &t);
  auto category = [&](std::size_t lane, std::size_t i) {
    return t.categories[static_cast<std::size_t>(t.lanes[lane].spans.category[i])].name;
  };
  CHECK(category(0, 0) == "untagged");           // tag 0 in a trace whose profile has categories
  CHECK(category(0, 1) == "unpublished chain");
  CHECK(category(0, 2) == "wake");
  CHECK(category(0, 3) == "fifo job");
  CHECK(category(0, 4) == "other spans");
  for (const Category& c : t.categories) {
    CHECK(c.name != "std kernel");
    CHECK_FALSE(c.guessed);
  }
}

TEST_CASE("a trace without tags: chains named by stage count, each category marked guessed") {
  Trace t;
  load_string(trace_of({span(0, "1", "1", "chunk", 0, 0, 5), span(1, "0", "1", "publish", 1, 8, 5)}), &t);
  CHECK(t.attribution == Attribution::stage_count);
  const Category& c = t.categories[static_cast<std::size_t>(t.lanes[0].spans.category[0])];
  CHECK(c.name == "classifier");
  CHECK(c.guessed);
}

TEST_CASE("legacy traces: no profile / categories from the stage-count heuristic") {
  Trace t;
  load_string(trace_of({span(0, "1", "1", "chunk", 0, 0, 5), span(1, "0", "1", "publish", 4, 8, 5)}), &t);
  CHECK(t.jobque);
  CHECK_FALSE(t.profile.present);
  CHECK(t.categories[static_cast<std::size_t>(t.lanes[0].spans.category[0])].name == "attn chain");
  CHECK(t.categories[static_cast<std::size_t>(t.lanes[0].spans.category[0])].color == "#5E96DE");
}

TEST_CASE("a generic trace is not jobque and gets no categories") {
  Trace t;
  load_string(R"({"traceEvents":[{"ph":"X","name":"chunk","ts":1,"dur":1,"pid":1,"tid":1,"cat":"c"}]})", &t);
  CHECK_FALSE(t.jobque);
  CHECK(t.categories.empty());
  CHECK(t.names.view(static_cast<uint32_t>(t.lanes[0].spans.cat[0] - 1)) == "c");
}

TEST_CASE("B/E pair per lane as a stack - unclosed B runs to the end - stray E is dropped") {
  Trace t;
  load_string(R"({"traceEvents":[
    {"ph":"B","name":"outer","ts":0,"pid":1,"tid":1},
    {"ph":"B","name":"inner","ts":2,"pid":1,"tid":1},
    {"ph":"B","name":"other lane","ts":3,"pid":1,"tid":2},
    {"ph":"E","ts":4,"pid":1,"tid":1},
    {"ph":"E","ts":9,"pid":1,"tid":1},
    {"ph":"E","ts":10,"pid":1,"tid":1},
    {"ph":"X","name":"late","ts":20,"dur":5,"pid":1,"tid":3}]})",
              &t);
  CHECK(t.unclosed_begins == 1);
  CHECK(t.unmatched_ends == 1);
  const SpanTable& s = t.lanes[0].spans;
  REQUIRE(s.size() == 2);
  CHECK(t.names.view(static_cast<uint32_t>(s.name[0])) == "outer");
  CHECK(s.dur[0] == 9000);
  CHECK(s.dur[1] == 2000);
  const SpanTable& other = t.lanes[1].spans;
  REQUIRE(other.size() == 1);
  CHECK(other.end(0) == 25000);  // runs to the trace end
}

TEST_CASE("instants sorted by time - counters and metadata kept") {
  Trace t;
  load_string(R"({"traceEvents":[
    {"ph":"M","name":"thread_name","pid":1,"tid":7,"args":{"name":"caller 7"}},
    {"ph":"M","name":"process_name","pid":1,"args":{"name":"decode"}},
    {"ph":"i","s":"g","name":"token","ts":9,"pid":1,"tid":7,"args":{"arg":1}},
    {"ph":"i","s":"g","name":"token","ts":3,"pid":1,"tid":7,"args":{"arg":0}},
    {"ph":"C","name":"mem","ts":4,"pid":1,"tid":7,"args":{"v":1}}]})",
              &t);
  REQUIRE(t.lanes.size() == 1);
  CHECK(t.thread_name(0) == "caller 7");
  REQUIRE(t.process_names.size() == 1);
  CHECK(t.process_names[0].name == "decode");
  REQUIRE(t.instants.size() == 2);
  CHECK(t.instants.ts[0] == 3000);
  CHECK(marker_arg(t.instants.arg[0]) == 0);
  CHECK(t.counters.size() == 1);
  CHECK(t.phase_counts['M'] == 2);
}

TEST_CASE("malformed events are counted / not stored") {
  Trace t;
  load_string(R"({"traceEvents":[{"ph":"X","name":"a","ts":1,"pid":1,"tid":1},
    {"ph":"X","name":"b","ts":1,"dur":-1,"pid":1,"tid":1},{"ph":"X","name":"c","ts":1,"dur":1,"pid":1,"tid":1}]})",
              &t);
  CHECK(t.malformed == 2);
  CHECK(t.lanes[0].spans.size() == 1);
}

TEST_CASE("the model of a generated jobque trace stays small") {
  Trace t;
  std::string err;
  auto src = Source::open(std::string(jqtrace::test::kSamplesDir) + "/decode-small.trace.json", &err);
  REQUIRE(src);
  ReadResult r = load_trace(*src, &t, nullptr);
  CHECK(r.status == ReadStatus::ok);
  std::size_t spans = 0;
  for (const Lane& l : t.lanes) spans += l.spans.size();
  CHECK(spans > 500);
  // Columns: about 15 bytes a span against ~110 bytes of JSON per event.
  CHECK(t.memory_bytes() < r.bytes / 4);
  // The tracer's chain ids (0, 2, 4, ...) stay in pages: 8 bytes a chain, no hash table.
  CHECK(t.chains.size() > 10);
  CHECK_FALSE(t.chains.sparse());
}

TEST_CASE("times beyond +-2^61 ns are out of range where they enter, so no difference overflows") {
  Trace t;
  load_string(R"([{"ph":"X","name":"a","ts":-4500000000000000,"dur":1,"pid":0,"tid":0},)"
              R"({"ph":"X","name":"b","ts":0,"dur":9000000000000000,"pid":0,"tid":0},)"
              R"({"ph":"X","name":"c","ts":2305843009213693,"dur":1,"pid":0,"tid":0}])",
              &t);
  CHECK(t.malformed == 2);  // -4.5e18 ns and a dur of 9e18 ns; 2^61 ns = 2305843009213693.952 us is the edge
  CHECK(t.end_ns - t.start_ns >= 0);
  CHECK_FALSE(t.durations_too_large());
}

TEST_CASE("span durations that add up past 2^62 ns make the trace refused, not summed into a wrong number") {
  Trace t;
  std::string span = R"({"ph":"X","name":"a","ts":0,"dur":2000000000000000,"pid":0,"tid":0})";
  load_string("[" + span + "," + span + "]", &t);
  CHECK_FALSE(t.durations_too_large());  // 4e18 ns: still below 2^62
  Trace more;
  load_string("[" + span + "," + span + "," + span + "]", &more);
  CHECK(more.durations_too_large());
}

TEST_CASE("lanes by (pid, tid): numbers and strings apart, every event of a lane on it, however many lanes") {
  // Two passes over 20,000 lanes, the second in reverse: the index grows (rehashes) during
  // the first and must find every lane again in the second. Numeric and string ids with the
  // same digits are different lanes.
  std::vector<std::string> events;
  constexpr int kLanes = 20000;
  for (int pass = 0; pass < 2; ++pass)
    for (int k = 0; k < kLanes; ++k) {
      int i = pass == 0 ? k : kLanes - 1 - k;
      char pid[16], event[128];
      if (i % 5 == 0) std::snprintf(pid, sizeof pid, "\"p\"");
      else std::snprintf(pid, sizeof pid, "%d", i % 7);
      std::snprintf(event, sizeof event, i % 3 == 0 ? R"({"ph":"X","pid":%s,"tid":"%d","ts":%d,"dur":1,"name":"x"})"
                                                    : R"({"ph":"X","pid":%s,"tid":%d,"ts":%d,"dur":1,"name":"x"})",
                    pid, i, pass * 100 + 1);
      events.push_back(event);
    }
  events.push_back(R"({"ph":"X","pid":3,"tid":"3","ts":500,"dur":1,"name":"x"})");  // lane 3 above
  events.push_back(R"({"ph":"X","pid":3,"tid":3,"ts":500,"dur":1,"name":"x"})");  // lane 3 as numbers: new
  Trace t;
  load_string(trace_of(events), &t);
  REQUIRE(t.lanes.size() == kLanes + 1);
  for (int i = 0; i < kLanes; ++i) {
    const Lane& lane = t.lanes[static_cast<std::size_t>(i)];
    CHECK(lane.tid.is_string == (i % 3 == 0));
    CHECK(lane.spans.size() == (i == 3 ? 3u : 2u));
    if (lane.spans.size() >= 2) CHECK(lane.spans.ts[1] == 101000);
  }
  CHECK(t.lanes.back().pid.number == 3);
  CHECK(!t.lanes.back().tid.is_string);
}

TEST_CASE("a lane with one span costs at most 192 bytes of model") {
  // A trace of a million one-span lanes is mostly its lanes (issue 17, many lanes): eight
  // columns of 16 bytes with the first value in place, 16-byte ids, the thread name's id.
  // It was 624 bytes, then 352 (columns of 32 bytes, the thread name a std::string).
  CHECK(sizeof(Lane) <= 192);
  Trace t;
  load_string(trace_of({R"({"ph":"X","pid":1,"tid":2,"ts":175780914,"dur":12.5,"name":"x","cat":"c"})"}), &t);
  REQUIRE(t.lanes.size() == 1);
  CHECK(t.lanes[0].spans.dur[0] == 12500);
  CHECK(t.lanes[0].spans.ts[0] == 175780914000);
}

TEST_CASE("a lane of more spans than a finishing slice: the same order and categories on threads as on one") {
  // Thread 0 holds 300,000 chunks (three slices of the parallel finish), published early
  // and late with different tags; in the second file two spans are out of order across a
  // slice boundary, so the lane must be sorted.
  for (bool out_of_order : {false, true}) {
    std::vector<std::string> events;
    events.push_back(span(1, "0", "1", "publish", 2 | (1 << 8), 0, 1));
    for (int i = 0; i < 300000; ++i) {
      int ts = i * 2;
      if (out_of_order && i == 131071) ts = 131072 * 2 + 1;  // after the next slice's first
      std::string t = std::to_string(ts);
      int chain = i % 3 == 0 ? 1 : i % 3 == 1 ? 3 : 5;  // 5 is never published
      events.push_back(span(0, t.c_str(), "1", i % 7 == 0 ? "wake" : "chunk", 0, 0, chain));
    }
    events.push_back(span(1, "700000", "1", "publish", 2 | (3 << 8), 0, 3));
    std::string text = trace_of(events, kProfile);
    TempFile file(text);
    Trace one, threads;
    load_string(text, &one);
    ReadResult r;
    REQUIRE(load_trace_parallel(input_of(file.path), 4, &threads, nullptr, LoadOptions{}, {}, &r, text.size() / 3));
    check_same_model(one, threads);
    std::size_t big = one.lanes[0].spans.size() > one.lanes[1].spans.size() ? 0 : 1;  // tid 0's
    const SpanTable &a = one.lanes[big].spans, &b = threads.lanes[big].spans;
    REQUIRE(a.size() == 300000);
    bool same = true;
    for (std::size_t i = 0; i < a.size(); ++i) same = same && a.category[i] == b.category[i] && a.chain[i] == b.chain[i];
    CHECK(same);
    CHECK(one.categories[static_cast<std::size_t>(b.category[1])].name == "ffn chain");  // chain 3's
    CHECK(one.categories[static_cast<std::size_t>(b.category[0])].name == "wake");
  }
}
