// Cutting files for parallel parsing, and the parallel loader's equality with one pass.
#include <doctest/doctest.h>

#include <memory>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
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
        PartPlan from_file = plan_file(file.path, threads, min_part), from_text = plan_parts(text, threads, min_part);
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
  PartPlan plan = plan_file(file.path, 4, 64);
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
    PartPlan plan = plan_file(file.path, 8, 4096);
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
  REQUIRE(load_trace_parallel(file.path, 4, &parts, nullptr, LoadOptions{}, {}, &r, 4096));
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
  REQUIRE(load_trace_parallel(file.path, 4, &from_file, nullptr, LoadOptions{}, {}, &rf, 4096));
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
  // Three lanes of thousands of spans in each part (joined on the threads), hundreds of
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
  REQUIRE(load_trace_parallel(file.path, 2, &parts, nullptr, LoadOptions{}, {}, &r, text.size() / 3));
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
  REQUIRE(load_trace_parallel(file.path, 4, &parts, nullptr, LoadOptions{}, {}, &r, 4096));
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
  REQUIRE(load_trace_parallel(file.path, 4, parts, nullptr, LoadOptions{}, {}, &r, min_part_bytes));
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
  CHECK_FALSE(load_trace_parallel(small.path, 4, &t, nullptr, LoadOptions{}, {}, &r, 1 << 20));
  CHECK_FALSE(load_trace_parallel(small.path, 1, &t, nullptr, LoadOptions{}, {}, &r, 16));

  std::string broken = lines_trace(2000);
  std::size_t at = broken.find("\"ts\":15000");
  REQUIRE(at != std::string::npos);
  broken.replace(at, 10, "\"ts\":15000,,");
  TempFile file(broken);
  auto src = Source::from_string(broken);
  Trace seq;
  ReadResult expected = load_trace(*src, &seq, nullptr);
  REQUIRE(expected.status == ReadStatus::input_error);
  REQUIRE(load_trace_parallel(file.path, 4, &t, nullptr, LoadOptions{}, {}, &r, 4096));
  CHECK(r.status == ReadStatus::input_error);
  CHECK(r.message == expected.message);
  CHECK(r.offset == expected.offset);
  CHECK(r.events == expected.events);
}
