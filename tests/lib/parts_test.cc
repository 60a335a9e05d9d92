// Cutting files for parallel parsing, and the parallel loader's equality with one pass.
#include <doctest/doctest.h>

#include <memory>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <cstdio>
#include <fstream>
#include <thread>

#include "parts.h"
#include "test_util.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {
/// n one-line events after an object-form header.
std::string lines_trace(int n) {
  std::string text = "{\"traceEvents\":[\n";
  for (int i = 0; i < n; ++i)
    text += "{\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(i % 3) + ",\"ts\":" + std::to_string(i * 10) +
            ",\"dur\":5,\"name\":\"e" + std::to_string(i % 7) + "\"}" + (i + 1 < n ? ",\n" : "\n");
  return text + "]}\n";
}

}  // namespace

TEST_CASE("cuts fall where an event line starts, after a line ending in a comma") {
  std::string text = lines_trace(100);
  PartPlan plan = plan_parts(text, 4, 64);
  REQUIRE(plan.starts.size() == 4);
  CHECK(plan.prefix == "{\"traceEvents\":[");
  CHECK(plan.starts[0] == 0);
  for (std::size_t k = 1; k < plan.starts.size(); ++k) {
    CHECK(plan.starts[k] > plan.starts[k - 1]);
    CHECK(text[plan.starts[k]] == '{');
    CHECK(text[plan.starts[k] - 1] == '\n');
    CHECK(text[plan.starts[k] - 2] == ',');
  }
  CHECK(plan_parts("[\n" + text.substr(17), 2, 64).prefix == "[");
}

TEST_CASE("no cuts: one part for small files, one huge line, or what is not a trace") {
  CHECK(plan_parts(lines_trace(100), 4, 1 << 20).starts.size() == 1);
  std::string one_line = lines_trace(100);
  for (char& c : one_line)
    if (c == '\n') c = ' ';
  CHECK(plan_parts(one_line, 4, 64).starts.size() == 1);
  CHECK(plan_parts("\"just a string\"", 4, 1).starts.size() == 1);
  CHECK(plan_parts("", 4, 1).starts.size() == 1);
}

TEST_CASE("a file is cut where its text is: read a window at a time, the same cuts as the whole text") {
  std::string crlf = lines_trace(5000);
  for (std::size_t at = 0; (at = crlf.find('\n', at)) != std::string::npos; at += 2) crlf.replace(at, 1, "\r\n");
  std::string indented = lines_trace(5000);
  for (std::size_t at = 0; (at = indented.find("\n{", at)) != std::string::npos; at += 4) indented.replace(at, 2, "\n   {");
  // Events many times a window's length: the cut search crosses windows.
  std::string long_lines = "[\n";
  for (int i = 0; i < 12; ++i)
    long_lines += "{\"ph\":\"X\",\"ts\":" + std::to_string(i) + ",\"name\":\"" + std::string(300000, 'n') + "\"},\n";
  long_lines += "{}]";
  for (const std::string& text : {lines_trace(5000), crlf, indented, long_lines}) {
    TempFile file(text);
    for (unsigned threads : {2u, 3u, 8u})
      for (uint64_t min_part : {uint64_t{64}, uint64_t{4096}, uint64_t{100000}}) {
        PartPlan from_file = plan_file(*input_of(file.path), threads, min_part),
                 from_text = plan_parts(text, threads * kPartsPerThread, min_part);
        CHECK(from_file.starts == from_text.starts);
        CHECK(from_file.prefix == from_text.prefix);
      }
  }
  // Blanks longer than the window's margins around a newline: a cut there may be missed
  // (a longer part), never made anywhere but at an event's '{'.
  std::string blanks = "[\n";
  for (int i = 0; i < 200; ++i) blanks += "{\"ph\":\"i\",\"ts\":" + std::to_string(i) + "}," + std::string(9000, ' ') + "\n" + std::string(9000, ' ');
  blanks += "{}]";
  TempFile file(blanks);
  PartPlan plan = plan_file(*input_of(file.path), 4, 64);
  for (std::size_t k = 1; k < plan.starts.size(); ++k) CHECK(blanks[plan.starts[k]] == '{');
}

TEST_CASE("a file cut short while its cuts are planned is planned or read in one part, never a crash") {
  // Planned through a mapping, a file truncated under it killed the reader with SIGBUS.
  std::string text = lines_trace(40000);
  TempFile file(text);
  std::atomic<bool> done{false};
  std::thread rewriter([&] {
    while (!done) {
      int fd = ::open(file.path.c_str(), O_WRONLY | O_TRUNC);
      if (fd < 0) break;
      for (std::size_t at = 0; at < text.size(); at += 65536)
        if (::write(fd, text.data() + at, std::min<std::size_t>(65536, text.size() - at)) < 0) break;
      ::close(fd);
    }
  });
  constexpr std::size_t kPlans = 10000;  // through the mapping, SIGBUS came in 2 of 3 runs of 3,000
  std::size_t plans = 0;
  for (std::size_t i = 0; i < kPlans; ++i) {
    PartPlan plan = plan_file(*input_of(file.path), 8, 4096);
    for (std::size_t k = 1; k < plan.starts.size(); ++k) CHECK(plan.starts[k] > plan.starts[k - 1]);
    ++plans;
  }
  done = true;
  rewriter.join();
  CHECK(plans == kPlans);
}

TEST_CASE("the parallel loader builds the model one pass builds") {
  TempFile file(lines_trace(3000));
  Trace one, parts;
  load_string(lines_trace(3000), &one);
  ReadResult r;
  REQUIRE(load_trace_parallel(input_of(file.path), 4, &parts, nullptr, LoadOptions{}, {}, &r, 4096));
  CHECK(r.status == ReadStatus::ok);
  CHECK(r.events == 3000);
  check_same_model(one, parts);
}

TEST_CASE("a text in memory is read in parts and joined as its file is, on one thread or several") {
  std::string text = lines_trace(3000);
  TempFile file(text);
  auto shared = std::make_shared<const std::string>(text);
  Trace from_file, one;
  ReadResult rf;
  REQUIRE(load_trace_parallel(input_of(file.path), 4, &from_file, nullptr, LoadOptions{}, {}, &rf, 4096));
  load_string(text, &one);
  for (unsigned threads : {1u, 3u}) {
    Trace in_memory;
    ReadResult r;
    REQUIRE(load_text_parallel(shared, 4, threads, &in_memory, nullptr, LoadOptions{}, &r, 4096));
    CHECK(r.events == rf.events);
    CHECK(r.status == rf.status);
    check_same_model(one, in_memory);
    check_same_model(from_file, in_memory);
  }
  // Too small to cut: declined, as a file is.
  Trace none;
  ReadResult r;
  CHECK_FALSE(load_text_parallel(shared, 4, 1, &none, nullptr, LoadOptions{}, &r, text.size()));
}

TEST_CASE("the parallel join: lanes large and small, names new to a later part, lanes first seen there") {
  // Three lanes of thousands of spans in each part, hundreds of
  // one-span lanes (joined one by one as the part is freed), names and cats that only the
  // later part knows (its ids differ from the joined model's).
  std::string text = "{\"traceEvents\":[\n";
  const int n = 40000;
  for (int i = 0; i < n; ++i) {
    bool late = i > n / 2;
    std::string tid = i % 97 == 0 ? std::to_string(1000 + i) : std::to_string(i % 3);
    std::string name = late && i % 5 == 0 ? "late" : "e";
    name += std::to_string(late && i % 5 == 0 ? i % 11 : i % 7);
    text += "{\"ph\":\"X\",\"pid\":1,\"tid\":" + tid + ",\"ts\":" + std::to_string(i * 10) +
            ",\"dur\":" + std::to_string(i % 13) + ",\"name\":\"" + name + "\",\"cat\":\"c" + std::to_string(late ? i % 4 : 0) +
            "\",\"args\":{\"stage\":" + std::to_string(i % 3) + ",\"chain\":" + std::to_string(i / 10) + "}}" +
            (i + 1 < n ? ",\n" : "\n");
  }
  text += "]}\n";
  TempFile file(text);
  Trace one, parts;
  load_string(text, &one);
  ReadResult r;
  REQUIRE(load_trace_parallel(input_of(file.path), 2, &parts, nullptr, LoadOptions{}, {}, &r, text.size() / 3));
  CHECK(r.events == static_cast<uint64_t>(n));
  check_same_model(one, parts);
  REQUIRE(one.lanes.size() > 400);
  for (std::size_t l = 0; l < one.lanes.size(); ++l) {
    const SpanTable &a = one.lanes[l].spans, &b = parts.lanes[l].spans;
    CHECK(one.lanes[l].events == parts.lanes[l].events);
    for (std::size_t i = 0; i < a.size(); ++i) {
      CHECK(one.names.view(static_cast<uint32_t>(a.cat[i] - 1)) == parts.names.view(static_cast<uint32_t>(b.cat[i] - 1)));
      CHECK(a.stage[i] == b.stage[i]);
      CHECK(a.chain[i] == b.chain[i]);
      CHECK(a.category[i] == b.category[i]);
    }
  }
}

TEST_CASE("one-span lanes joined from parts keep their spans in place, as one pass does") {
  std::string text = "{\"traceEvents\":[\n";
  for (int i = 0; i < 3000; ++i)
    text += "{\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(i) + ",\"ts\":" + std::to_string(1000000 + i) +
            ",\"dur\":" + std::to_string(i % 7 + 1) + ",\"name\":\"n" + std::to_string(i % 9) + "\"}" + (i + 1 < 3000 ? ",\n" : "\n");
  text += "]}\n";
  TempFile file(text);
  Trace parts;
  ReadResult r;
  REQUIRE(load_trace_parallel(input_of(file.path), 4, &parts, nullptr, LoadOptions{}, {}, &r, 4096));
  REQUIRE(parts.lanes.size() == 3000);
  std::size_t allocated = 0;
  for (const Lane& lane : parts.lanes)
    for (const IntColumn* c : {&lane.spans.ts, &lane.spans.dur, &lane.spans.name, &lane.spans.cat})
      allocated += c->in_place() ? 0 : 1;
  CHECK(allocated == 0);
}

namespace {
/// text read in one pass into *one and from a file in parts of at least min_part_bytes
/// (4 threads) into *parts.
void load_one_and_in_parts(const std::string& text, uint64_t min_part_bytes, Trace* one, Trace* parts) {
  TempFile file(text);
  load_string(text, one);
  ReadResult r;
  REQUIRE(load_trace_parallel(input_of(file.path), 4, parts, nullptr, LoadOptions{}, {}, &r, min_part_bytes));
}
}  // namespace

TEST_CASE("thread names are joined across parts: the last one of a lane wins, an empty one too") {
  // A lane keeps its thread name's id in the model's own table of them: each part has its
  // table, so a later part's ids must be mapped. A later "" replaced an earlier name in one
  // pass but not in parts (a lane without a name did not override): now it does in both.
  std::string text = "{\"traceEvents\":[\n";
  auto thread_name = [](int tid, const std::string& name) {
    return "{\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(tid) +
           ",\"name\":\"thread_name\",\"args\":{\"name\":\"" + name + "\"}},\n";
  };
  for (int i = 0; i < 600; ++i) {
    if (i == 10) text += thread_name(0, "early") + thread_name(1, "one") + thread_name(2, "kept");
    if (i == 500) text += thread_name(0, "late") + thread_name(2, "") + thread_name(3, "only late");
    text += "{\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(i % 5) + ",\"ts\":" + std::to_string(i * 10) +
            ",\"dur\":5,\"name\":\"a\"}" + (i + 1 < 600 ? ",\n" : "\n");
  }
  text += "]}\n";
  Trace one, parts;
  load_one_and_in_parts(text, 2048, &one, &parts);
  REQUIRE(parts.lanes.size() == 5);
  check_same_model(one, parts);
  for (const Trace* t : {&one, &parts}) {
    CHECK(t->thread_name(0) == "late");
    CHECK(t->thread_name(1) == "one");
    CHECK(t->thread_name(2) == "");
    CHECK(t->thread_name(3) == "only late");
    CHECK(t->thread_name(4) == "");
  }
}

TEST_CASE("the parallel loader joins counters without a name (they crashed the join)") {
  std::string text = "{\"traceEvents\":[\n";
  for (int i = 0; i < 400; ++i) {
    text += "{\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(i % 2) + ",\"ts\":" + std::to_string(i * 10) +
            ",\"dur\":5,\"name\":\"a\"},\n";
    if (i % 50 == 7) text += "{\"ph\":\"C\",\"pid\":1,\"tid\":0,\"ts\":" + std::to_string(i * 10) + ",\"args\":{\"v\":1}},\n";
    if (i % 50 == 9) text += "{\"ph\":\"C\",\"pid\":1,\"tid\":0,\"ts\":1,\"name\":\"mem\",\"args\":{\"v\":2}},\n";
  }
  text += "{\"ph\":\"C\",\"pid\":1,\"tid\":1,\"ts\":5,\"args\":{\"v\":3}}\n]}\n";
  Trace one, parts;
  load_one_and_in_parts(text, 512, &one, &parts);
  REQUIRE(parts.counters.size() == one.counters.size());
  for (std::size_t i = 0; i < one.counters.size(); ++i) {
    CHECK(one.counters.name[i] == parts.counters.name[i]);  // -1 (no name) or the id of "mem"
    CHECK(one.counters.ts[i] == parts.counters.ts[i]);
  }
  CHECK(one.counters.name[0] == -1);
}

TEST_CASE("the parallel loader declines what it cannot cut, and reports the first error") {
  TempFile small(lines_trace(10));
  Trace t;
  ReadResult r;
  CHECK_FALSE(load_trace_parallel(input_of(small.path), 4, &t, nullptr, LoadOptions{}, {}, &r, 1 << 20));
  CHECK_FALSE(load_trace_parallel(input_of(small.path), 1, &t, nullptr, LoadOptions{}, {}, &r, 16));

  std::string broken = lines_trace(2000);
  std::size_t at = broken.find("\"ts\":15000");
  REQUIRE(at != std::string::npos);
  broken.replace(at, 10, "\"ts\":15000,,");
  TempFile file(broken);
  auto src = Source::from_string(broken);
  Trace seq;
  ReadResult expected = load_trace(*src, &seq, nullptr);
  REQUIRE(expected.status == ReadStatus::input_error);
  REQUIRE(load_trace_parallel(input_of(file.path), 4, &t, nullptr, LoadOptions{}, {}, &r, 4096));
  CHECK(r.status == ReadStatus::input_error);
  CHECK(r.message == expected.message);
  CHECK(r.offset == expected.offset);
  CHECK(r.events == expected.events);
}

namespace {
struct CountingSink final : EventSink {
  void on_event(const RawEvent&, const Interner&) override {}
};

/// A PartWork that reads each part with a plain reader (no model) and records what
/// read_parts asks of it; `before_read(k)` runs first on the reading thread.
struct RecordingWork {
  std::mutex mutex;
  std::vector<std::string> calls;  ///< "read k", "join k", "rest k", "drop k" as they came
  std::function<void(std::size_t)> before_read = [](std::size_t) {};
  std::function<bool(std::size_t)> may_join = [](std::size_t) { return true; };

  void note(std::string call) {
    std::lock_guard<std::mutex> lock(mutex);
    calls.push_back(std::move(call));
  }
  bool called(const std::string& call) {
    std::lock_guard<std::mutex> lock(mutex);
    return std::find(calls.begin(), calls.end(), call) != calls.end();
  }
  std::vector<std::string> of(char kind) {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<std::string> out;
    for (const std::string& c : calls)
      if (c[0] == kind) out.push_back(c);
    return out;
  }
  PartWork work() {
    PartWork w;
    w.read = [this](std::size_t k, Source& src, const ReadOptions& options) {
      before_read(k);
      note("read " + std::to_string(k));
      CountingSink sink;
      Interner names;
      return read_trace(src, sink, names, nullptr, options);
    };
    w.join = [this](std::size_t k) {
      if (!may_join(k)) return false;
      note("join " + std::to_string(k));
      return true;
    };
    w.read_rest = [this](std::size_t k, Source& src) {
      note("rest " + std::to_string(k));
      CountingSink sink;
      Interner names;
      return read_trace(src, sink, names, nullptr, ReadOptions{});
    };
    w.drop = [this](std::size_t k) { note("drop " + std::to_string(k)); };
    return w;
  }
};
}  // namespace

TEST_CASE("parts are joined in order as they are read, not after the last one") {
  auto text = std::make_shared<const std::string>(lines_trace(4000));
  PartPlan plan = plan_parts(*text, 6, 64);
  REQUIRE(plan.starts.size() == 6);
  RecordingWork rec;
  // The last part is read only once part 0 is joined: a join that waited for every read
  // would never come (the wait gives up after 20 s, and the check below fails).
  rec.before_read = [&](std::size_t k) {
    if (k + 1 != plan.starts.size()) return;
    for (int waited = 0; waited < 2000 && !rec.called("join 0"); ++waited)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  std::vector<PartRead> reads = read_parts(text_parts(text), plan, 2, {}, rec.work());
  CHECK(reads.size() == 6);
  std::vector<std::string> joins = rec.of('j');
  CHECK(joins == std::vector<std::string>{"join 0", "join 1", "join 2", "join 3", "join 4", "join 5"});
  std::vector<std::string> calls = rec.calls;
  auto at = [&](const std::string& c) { return std::find(calls.begin(), calls.end(), c) - calls.begin(); };
  CHECK(at("join 0") < at("read 5"));
  CHECK(joined_result(reads, reads.size()).events == 4000);
}

TEST_CASE("a cut that proves wrong: the parts before it count, the rest of the file is read from the last good cut") {
  // Part 2's text runs on past where part 3 was to start: the cut is at a line that starts
  // with '{' after a line ending in ',' inside an event's args (a pretty-printed array of
  // objects). Parts 0 and 1 are joined, the file from part 2's start is read to its end.
  std::string text = lines_trace(3000);
  PartPlan plan = plan_parts(text, 5, 64);
  REQUIRE(plan.starts.size() == 5);
  std::size_t event_end = text.rfind('}', plan.starts[3]);  // of the event before the cut
  std::string broken = text.substr(0, event_end) + ",\"args\":{\"a\":[1,\n{\"x\":1}]}" + text.substr(event_end);
  PartPlan broken_plan = plan;
  broken_plan.starts[3] = broken.find("{\"x\"");
  broken_plan.starts[4] += broken.size() - text.size();
  auto shared = std::make_shared<const std::string>(broken);
  RecordingWork rec;
  std::vector<PartRead> reads = read_parts(text_parts(shared), broken_plan, 2, {}, rec.work());
  CHECK(rec.of('j') == std::vector<std::string>{"join 0", "join 1"});
  std::vector<std::string> reads_and_rest = rec.of('r');
  CHECK(reads_and_rest.back() == "rest 2");  // after the parts' reads, on the calling thread
  CHECK(std::count(reads_and_rest.begin(), reads_and_rest.end(), "rest 2") == 1);
  REQUIRE(reads.size() == 3);
  CHECK(reads[2].result.status == ReadStatus::ok);
  CHECK(joined_result(reads, reads.size()).events == 3000);
}

TEST_CASE("an input error ends the read at its part: later parts are dropped or not read") {
  std::string text = lines_trace(3000);
  PartPlan plan = plan_parts(text, 8, 64);
  REQUIRE(plan.starts.size() == 8);
  std::string broken = text;
  broken[plan.starts[1] + 10] = '#';  // inside part 1's first event
  auto shared = std::make_shared<const std::string>(broken);
  RecordingWork rec;
  // Part 2 is read only once part 1 is joined, so that the parts after it are handed out
  // after the error is known (and the test does not depend on how fast threads start).
  rec.before_read = [&](std::size_t k) {
    for (int waited = 0; k == 2 && waited < 2000 && !rec.called("join 1"); ++waited)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  std::vector<PartRead> reads = read_parts(text_parts(shared), plan, 2, {}, rec.work());
  REQUIRE(reads.size() == 2);
  CHECK(reads[1].result.status == ReadStatus::input_error);
  CHECK(rec.of('j') == std::vector<std::string>{"join 0", "join 1"});
  CHECK(rec.of('r').size() <= 3);  // parts handed out after the error are not read
  for (const std::string& c : rec.of('d')) CHECK(std::stoul(c.substr(5)) >= 2);
}

TEST_CASE("a join that cannot be exact: the rest is read from that part's start into the state joined so far") {
  auto text = std::make_shared<const std::string>(lines_trace(3000));
  PartPlan plan = plan_parts(*text, 4, 64);
  REQUIRE(plan.starts.size() == 4);
  RecordingWork rec;
  rec.may_join = [](std::size_t k) { return k != 2; };
  std::vector<PartRead> reads = read_parts(text_parts(text), plan, 2, {}, rec.work());
  CHECK(rec.of('j') == std::vector<std::string>{"join 0", "join 1"});
  CHECK(rec.called("rest 2"));
  REQUIRE(reads.size() == 3);
  CHECK(joined_result(reads, reads.size()).events == 3000);
}
