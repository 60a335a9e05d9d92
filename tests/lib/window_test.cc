#include <doctest/doctest.h>

#ifdef JQTRACE_HAVE_ZSTD
#include <zstd.h>
#endif

#include <filesystem>

#include <fmt/core.h>

#include "test_util.h"
#include "window.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {
struct Indexed {
  Trace trace;
  EventIndex index;
  std::string text;
};
void index_of(const std::string& json, Indexed* out) {
  out->text = json;
  auto src = Source::from_string(json);
  LoadOptions load;
  load.spans = false;
  load.tee = &out->index;
  load_trace(*src, &out->trace, nullptr, load);
  out->index.finish(out->trace.end_ns);
}
std::vector<std::string> chosen_text(const Indexed& x, Range r) {
  std::vector<std::string> out;
  for (const EventIndex::Entry& e : select_window(x.index, r).entries(x.index))
    out.push_back(x.text.substr(e.offset, e.end_offset - e.offset));
  return out;
}
}  // namespace

TEST_CASE("the index knows where every event's text is") {
  Indexed x;
  index_of("{\"traceEvents\":[\n  {\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2} ,\n{\"ph\":\"i\",\"name\":\"b\",\"ts\":5}]}",
           &x);
  REQUIRE(x.index.size() == 2);
  std::vector<std::string> all = chosen_text(x, {0, 100000});
  CHECK(all == std::vector<std::string>{R"({"ph":"X","name":"a","ts":1,"dur":2})", R"({"ph":"i","name":"b","ts":5})"});
}

TEST_CASE("spans overlap the window, instants fall inside it, metadata always") {
  Indexed x;
  index_of(R"([{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"t"}},
    {"ph":"X","name":"early","ts":0,"dur":10,"pid":1,"tid":1},
    {"ph":"X","name":"touch","ts":10,"dur":5,"pid":1,"tid":1},
    {"ph":"i","name":"in","ts":12,"pid":1,"tid":1},
    {"ph":"i","name":"out","ts":25,"pid":1,"tid":1},
    {"ph":"X","name":"late","ts":21,"dur":5,"pid":1,"tid":1}])",
           &x);
  std::vector<std::string> got = chosen_text(x, {10000, 20000});
  REQUIRE(got.size() == 4);
  CHECK(got[0].find("thread_name") != std::string::npos);
  CHECK(got[1].find("early") != std::string::npos);  // ends exactly at the window's start
  CHECK(got[2].find("touch") != std::string::npos);
  CHECK(got[3].find("\"in\"") != std::string::npos);
}

TEST_CASE("a window's choice: a bit an event, a chain's publish taken once, where the first chosen text starts") {
  Indexed x;
  index_of(R"([{"ph":"X","name":"publish","ts":0,"dur":1,"pid":1,"tid":2,"args":{"chain":7,"stage":2}},
    {"ph":"X","name":"other","ts":5,"dur":1,"pid":1,"tid":1},
    {"ph":"X","name":"chunk","ts":50,"dur":5,"pid":1,"tid":1,"args":{"chain":7,"stage":0}},
    {"ph":"X","name":"chunk","ts":52,"dur":5,"pid":1,"tid":1,"args":{"chain":7,"stage":1}}])",
           &x);
  REQUIRE(x.index.size() == 4);
  WindowSelection chosen = select_window(x.index, {50000, 60000});
  CHECK(chosen.size() == 3);  // both chunks and their chain's publish (chosen twice, counted once)
  CHECK(chosen.chosen(0));
  CHECK_FALSE(chosen.chosen(1));
  CHECK(chosen.first_offset(x.index) == x.text.find("{\"ph\":\"X\",\"name\":\"publish\""));
  std::vector<EventIndex::Entry> entries = chosen.entries(x.index);
  REQUIRE(entries.size() == 3);
  CHECK(entries[1].index == 2);
  CHECK(entries[2].offset == x.text.find("{\"ph\":\"X\",\"name\":\"chunk\",\"ts\":52"));
  WindowSelection none = select_window(x.index, {100000, 200000});
  CHECK(none.empty());
  CHECK(none.first_offset(x.index) == UINT64_MAX);
}

TEST_CASE("B/E pairs are kept whole when their span overlaps the window") {
  Indexed x;
  index_of(R"([{"ph":"B","name":"outer","ts":0,"pid":1,"tid":1},
    {"ph":"B","name":"before","ts":1,"pid":1,"tid":1},{"ph":"E","ts":2,"pid":1,"tid":1},
    {"ph":"E","ts":50,"pid":1,"tid":1},
    {"ph":"B","name":"open","ts":60,"pid":1,"tid":1},
    {"ph":"X","name":"end","ts":70,"dur":30,"pid":1,"tid":1}])",
           &x);
  std::vector<std::string> got = chosen_text(x, {20000, 30000});
  REQUIRE(got.size() == 2);  // outer's B and E
  CHECK(got[0].find("outer") != std::string::npos);
  CHECK(got[1].find("50") != std::string::npos);
  CHECK(chosen_text(x, {90000, 95000}).size() == 2);  // the unclosed B runs to the end (100)
}

TEST_CASE("rebasing rewrites the event's own ts, not one inside args or a string") {
  std::string e = R"({"name":"ts","args":{"ts":5},"ph":"X", "ts" : 1100.5,"dur":100})";
  CHECK(replace_top_level_number(e, "ts", "100.5"));
  CHECK(e == R"({"name":"ts","args":{"ts":5},"ph":"X", "ts" : 100.5,"dur":100})");
  std::string no_ts = R"({"name":"x","args":{"ts":5}})";
  CHECK_FALSE(replace_top_level_number(no_ts, "ts", "1"));
  std::string escaped = R"({"name":"a\"ts\"","ts":3})";
  CHECK(replace_top_level_number(escaped, "ts", "0"));
  CHECK(escaped == R"({"name":"a\"ts\"","ts":0})");
}

TEST_CASE("rebasing rewrites the ts the reader used: the last of duplicate keys, escapes decoded") {
  std::string twice = R"({"ph":"X","ts":1,"dur":1,"ts":2000})";
  CHECK(replace_top_level_number(twice, "ts", "7"));
  CHECK(twice == R"({"ph":"X","ts":1,"dur":1,"ts":7})");
  std::string escaped_key = R"({"ph":"X","\u0074s":2000,"dur":1})";
  CHECK(replace_top_level_number(escaped_key, "ts", "7"));
  CHECK(escaped_key == R"({"ph":"X","\u0074s":7,"dur":1})");
  std::string both = R"({"ts":5,"ph":"X","\u0074\u0073":2000})";
  CHECK(replace_top_level_number(both, "ts", "7"));
  CHECK(both == R"({"ts":5,"ph":"X","\u0074\u0073":7})");
  std::string not_a_number = R"({"ts":5,"ts":"x"})";  // the reader's ts is no number: refused
  CHECK_FALSE(replace_top_level_number(not_a_number, "ts", "7"));
}

namespace {
/// Ranges of a text read back through TextRanges from a file of `bytes` (the text,
/// compressed or not), checked against the text itself.
void check_ranges_read_back(const std::string& bytes, const std::string& text) {
  TempFile file(bytes);
  std::string err;
  auto ranges = TextRanges::open(input_of(file.path), &err);
  REQUIRE(ranges);
  // Within a block, across the decoder's 256 KiB blocks, touching, empty, at the very end.
  std::vector<std::pair<uint64_t, uint64_t>> asked = {{0, 10},           {17, 17},         {100, 300000},
                                                      {300000, 300001},  {524287, 524289}, {600000, 900000},
                                                      {text.size() - 5, text.size()}};
  std::string got;
  for (auto [lo, hi] : asked) {
    got.clear();
    CHECK(ranges->read(lo, hi, &got));
    CHECK(got == text.substr(lo, hi - lo));
  }
  CHECK_FALSE(ranges->read(text.size(), text.size() + 1, &got));  // past the end: the text changed
}

std::string long_text() {
  std::string text;
  XorShift rng{12345};
  while (text.size() < 1000000) text += "line " + std::to_string(rng(1000000)) + "\n";
  return text;
}
}  // namespace

TEST_CASE("ranges of a compressed file are decoded again, block by block") {
  std::string text = long_text();
  SUBCASE("plain") { check_ranges_read_back(text, text); }
  SUBCASE("gzip, two members") {
    check_ranges_read_back(gzip_bytes(text.substr(0, 400000)) + gzip_bytes(text.substr(400000)), text);
  }
#ifdef JQTRACE_HAVE_ZSTD
  SUBCASE("zstd of several frames, read from the frame before each range") {
    // The first frame is damaged: a range after it reads only if decoding starts at a later frame.
    std::vector<GzipPoint> frames;
    std::string z;
    for (uint64_t at = 0; at < text.size(); at += 200000) {
      GzipPoint frame;
      frame.out = at;
      frame.in = z.size();
      frames.push_back(frame);
      std::string piece = text.substr(at, 200000);
      std::string packed(ZSTD_compressBound(piece.size()), '\0');
      std::size_t n = ZSTD_compress(packed.data(), packed.size(), piece.data(), piece.size(), 3);
      REQUIRE_FALSE(ZSTD_isError(n));
      z += packed.substr(0, n);
    }
    std::string damaged = z;
    for (std::size_t i = 20; i < frames[1].in - 20; i += 97) damaged[i] = static_cast<char>(damaged[i] ^ 0x5a);
    TempFile file(damaged);
    std::string err;
    auto ranges = TextRanges::open(input_of(file.path), &err, &frames);
    REQUIRE(ranges);
    std::string got;
    for (auto [lo, hi] : std::vector<std::pair<uint64_t, uint64_t>>{{250000, 250100}, {399990, 400010}, {900000, 999000}}) {
      got.clear();
      CHECK(ranges->read(lo, hi, &got));
      CHECK(got == text.substr(lo, hi - lo));
    }
    CHECK_FALSE(ranges->read(text.size(), text.size() + 1, &got));
    auto from_start = TextRanges::open(input_of(file.path), &err);  // no frames known: the damage is in the way
    REQUIRE(from_start);
    CHECK_FALSE(from_start->read(250000, 250100, &got));
  }
  SUBCASE("zstd") {
    std::string z(ZSTD_compressBound(text.size()), '\0');
    std::size_t n = ZSTD_compress(z.data(), z.size(), text.data(), text.size(), 3);
    REQUIRE_FALSE(ZSTD_isError(n));
    z.resize(n);
    check_ranges_read_back(z, text);
  }
#endif
}

TEST_CASE("a plain file's ranges are read a block at a time: runs of small ones, far jumps, long ones, the end") {
  std::string text = long_text();
  TempFile file(text);
  std::string err;
  auto ranges = TextRanges::open(input_of(file.path), &err);
  REQUIRE(ranges);
  std::string got, expected;  // appended to, as a window's writer does
  auto read = [&](uint64_t lo, uint64_t hi) {
    CHECK(ranges->read(lo, hi, &got));
    expected += text.substr(lo, hi - lo);
  };
  for (uint64_t lo = 0; lo < 300000; lo += 37) read(lo, lo + 30);  // events side by side: the block grows
  for (uint64_t lo = 300001; lo < 700000; lo += 50000) read(lo, lo + 100);  // far apart: it shrinks
  read(700000, 700000 + 200000);  // longer than half a block: read straight
  read(900000, 900010);
  read(900000 + 4090, 900000 + 4200);  // across the end of a page-sized block
  read(910000, 910000);                // empty
  read(text.size() - 5, text.size());  // the very end
  CHECK(got == expected);
  CHECK_FALSE(ranges->read(text.size(), text.size() + 1, &got));  // past the end: the text changed

  // A file cut short after it was indexed: a range past its new end is not read.
  auto again = TextRanges::open(input_of(file.path), &err);
  REQUIRE(again);
  std::string part;
  CHECK(again->read(10, 20, &part));
  std::filesystem::resize_file(file.path, 500000);
  CHECK(again->read(20, 30, &part));  // still in the block read before the cut
  CHECK_FALSE(again->read(499990, 500010, &part));
  CHECK(part == text.substr(10, 20));
}

TEST_CASE("the index numbers each event's lane, the same whether the file is read whole or in parts") {
  // Lanes by number and by string ids; "1" and 1 are different lanes with the same label.
  std::string text = "[";
  XorShift rng{7};
  for (int i = 0; i < 3000; ++i) {
    int lane = static_cast<int>(rng(5));
    std::string pid = lane == 3 ? "\"one\"" : "1", tid = lane == 4 ? "\"1\"" : std::to_string(lane);
    text += fmt::format(R"({{"ph":"X","name":"s","pid":{},"tid":{},"ts":{},"dur":1}},)", pid, tid, i) + "\n";
  }
  text += R"({"ph":"M","name":"thread_name","pid":9,"tid":9,"args":{"name":"t"}}])";
  auto labels_of = [](const Trace& trace, const EventIndex& index) {
    std::vector<std::string> labels;
    index.for_each([&](const EventIndex::Entry& e) {
      const auto& [pid, tid] = index.lanes()[e.lane];
      labels.push_back(lane_label(pid, tid, trace.names));
    });
    return labels;
  };
  Indexed whole;
  index_of(text, &whole);
  std::vector<std::string> labels = labels_of(whole.trace, whole.index);
  REQUIRE(labels.size() == 3001);
  CHECK(whole.index.lanes().size() == 6);  // five span lanes and the metadata's
  CHECK(labels.back() == "9:9");
  CHECK(std::count(labels.begin(), labels.end(), "one:3") > 0);
  // "1:1" is the label of two lanes (tid 1 and tid "1"): about twice the events of "1:2".
  CHECK(std::count(labels.begin(), labels.end(), "1:1") > std::count(labels.begin(), labels.end(), "1:2"));

  TempFile file(text);
  Trace parts;
  EventIndex index;
  LoadOptions load;
  load.spans = false;
  load.tee = &index;
  ReadResult r;
  REQUIRE(load_trace_parallel(input_of(file.path), 4, &parts, nullptr, load, {}, &r, 4096));
  index.finish(parts.end_ns);
  CHECK(labels_of(parts, index) == labels);
  CHECK(index.lanes().size() == 6);
}

TEST_CASE("events read back from their text a batch at a time, each alone when one does not read as it did") {
  auto read_back = [](const std::vector<std::string>& texts) {
    EventTexts batch;
    for (const std::string& t : texts) batch.add(t);
    CHECK(batch.size() == texts.size());
    std::vector<std::pair<std::size_t, std::string>> got;  // (i, name:pid)
    batch.read_back([&](std::size_t i, const RawEvent& e, const Interner& names) {
      got.push_back({i, std::string(names.view(e.name)) + ":" + lane_label(e.pid, e.tid, names)});
    });
    return got;
  };
  using Got = std::vector<std::pair<std::size_t, std::string>>;
  std::vector<std::string> texts = {R"({"ph":"X","name":"a","pid":1,"tid":"t","ts":1,"dur":2})",
                                    R"({"ph":"i","name":"b","pid":"p","tid":2,"ts":5,"args":{"x":[1,{"y":2}]}})",
                                    R"({"name":"a\u0062","pid":1,"tid":1})"};
  CHECK(read_back(texts) == Got{{0, "a:1:t"}, {1, "b:p:2"}, {2, "ab:1:1"}});
  // The file changed under the index: a text that is no longer one event, or no event.
  std::vector<std::string> changed = {texts[0], R"({"ph":"X"},{"ph":"i","name":"two"})", R"(nul)", texts[1]};
  CHECK(read_back(changed) == Got{{0, "a:1:t"}, {3, "b:p:2"}});
  CHECK(read_back({}).empty());
}

TEST_CASE("a top-level member is found whole, whatever its value, and not inside another") {
  std::string e = R"({"args":{"name":"in","x":[1,{"name":2}]}, "name" : "a\"b}" ,"cat":"c","n":-1.5e3,"o":{}})";
  MemberPlace name = find_top_level_member(e, "name");
  REQUIRE(name.found());
  CHECK(e.substr(name.value_at, name.value_end - name.value_at) == R"("a\"b}")");
  MemberPlace args = find_top_level_member(e, "args");
  REQUIRE(args.found());
  CHECK(e.substr(args.value_at, args.value_end - args.value_at) == R"({"name":"in","x":[1,{"name":2}]})");
  MemberPlace n = find_top_level_member(e, "n");
  CHECK(e.substr(n.value_at, n.value_end - n.value_at) == "-1.5e3");
  MemberPlace o = find_top_level_member(e, "o");
  CHECK(e.substr(o.value_at, o.value_end - o.value_at) == "{}");
  CHECK_FALSE(find_top_level_member(e, "x").found());
  CHECK_FALSE(find_top_level_member("[1]", "x").found());
  std::string twice = R"({"name":"a","name":"b"})";  // the reader keeps the last
  MemberPlace last = find_top_level_member(twice, "name");
  CHECK(twice.substr(last.value_at, last.value_end - last.value_at) == R"("b")");
}
