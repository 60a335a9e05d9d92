#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "test_util.h"
#include "trace_index.h"
#include "window.h"

using namespace jqtrace;
using namespace jqtrace::test;

namespace {

/// A jobque-like trace written lane by lane (as the tracer does): chains published on one
/// lane, chunked on all, markers at the end.
std::string lane_by_lane_trace() {
  std::string t = "{\"traceEvents\":[\n";
  for (int lane = 0; lane < 3; ++lane) {
    t += "{\"ph\":\"M\",\"pid\":1,\"tid\":" + std::to_string(lane) +
         ",\"name\":\"thread_name\",\"args\":{\"name\":\"w" + std::to_string(lane) + "\"}},\n";
    for (int i = 0; i < 60; ++i) {
      int chain = i / 3 + 1;
      std::string ts = std::to_string(i * 100 + lane * 7), dur = std::to_string(40 + (i * 13) % 70);
      std::string name = lane == 2 && i % 3 == 0 ? "publish" : "chunk";
      std::string stage = name == "publish" ? std::to_string((2 << 8) | 2) : std::to_string(i % 2);
      t += "{\"ph\":\"X\",\"pid\":1,\"tid\":" + std::to_string(lane) + ",\"ts\":" + ts + ",\"dur\":" + dur +
           ",\"name\":\"" + name + "\",\"args\":{\"stage\":" + stage + ",\"arg\":" + std::to_string(i) +
           ",\"chain\":" + std::to_string(chain) + "}},\n";
    }
  }
  for (int u = 0; u < 6; ++u)
    t += "{\"ph\":\"i\",\"pid\":1,\"tid\":2,\"ts\":" + std::to_string(u * 1000 + 990) +
         ",\"name\":\"token\",\"s\":\"t\",\"args\":{\"arg\":" + std::to_string(u) + "}},\n";
  t += "{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":6500,\"dur\":10,\"name\":\"wake\"}\n]}\n";
  return t;
}

struct Indexed {
  Trace trace;
  ReadResult read;
  TraceIndex index;
  std::string bytes;  ///< the index file
};

/// Loads path (spans or not, in `threads` parts of `part` bytes) with a recorder cutting
/// blocks of block_bytes, and makes its index.
void index_file(const std::string& path, bool spans, uint64_t block_bytes, Indexed* out, unsigned threads = 1,
                uint64_t part = 1 << 20) {
  BlockRecorder recorder(block_bytes);
  LoadOptions load;
  load.spans = spans;
  load.tee = &recorder;
  if (threads < 2 || !load_trace_parallel(input_of(path), threads, &out->trace, nullptr, load, {}, &out->read, part)) {
    std::string err;
    auto src = Source::open(path, &err);
    REQUIRE(src);
    out->read = load_trace(*src, &out->trace, nullptr, load);
  }
  out->index.identity = *identify_file(*input_of(path));
  out->index.compression = out->read.compression;
  if (out->read.compression == Compression::gzip) {
    std::string why;
    REQUIRE(build_gzip_points(input_of(path), block_bytes, &out->index.points, &why));
  }
  out->index.prefix = out->read.container == Container::array ? "[" : "{\"traceEvents\":[";
  out->index.ranges = !recorder.saw_begin_end();
  out->index.blocks = recorder.finish();
  out->bytes = serialize_index(out->index, out->trace);
}

/// The spans of each lane that overlap range, as text (names, categories by name).
std::vector<std::string> spans_in(const Trace& t, Range range) {
  std::vector<std::string> out;
  for (const Lane& lane : t.lanes) {
    const SpanTable& s = lane.spans;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (!range.overlaps(s.ts[i], s.end(i))) continue;
      std::string category = s.category.size() ? t.categories[static_cast<std::size_t>(s.category[i])].name : "-";
      out.push_back(std::to_string(lane.tid.number) + " " + std::to_string(s.ts[i]) + " " + std::to_string(s.dur[i]) +
                    " " + std::string(t.names.view(static_cast<uint32_t>(s.name[i]))) + " " + category + " " +
                    std::to_string(s.chain[i]));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("an index's skeleton reads back as it was written") {
  for (const char* name : {"decode-small.trace.json", "legacy-small.trace.json", "chrome-small.json", "truncated.trace.json"}) {
    CAPTURE(name);
    TempFile file(sample_bytes(name));
    Indexed x;
    index_file(file.path, false, 512, &x);
    TraceIndex back;
    std::string why;
    REQUIRE(parse_index(x.bytes, &back, &why));
    CHECK(serialize_index(back, back.skeleton) == x.bytes);  // every field came back
    CHECK(back.skeleton.lanes.size() == x.trace.lanes.size());
    CHECK(back.skeleton.instants.size() == x.trace.instants.size());
    CHECK(back.skeleton.chains.size() == 0);  // chains come with the blocks
    CHECK(back.skeleton.categories.size() == x.trace.categories.size());
    CHECK(back.skeleton.end_ns == x.trace.end_ns);
    CHECK(back.skeleton.read.status == x.read.status);
    CHECK(back.blocks.size() == x.index.blocks.size());
  }
}

TEST_CASE("the skeleton is the same whether the load kept span tables or not") {
  // B/E pairs (chrome-small) count their unpaired ends either way, and the durations'
  // sum is kept either way: `jqtrace index` loads without span tables.
  for (const char* name : {"decode-small.trace.json", "chrome-small.json", "broken.trace.json"}) {
    CAPTURE(name);
    TempFile file(sample_bytes(name));
    Indexed with, without;
    index_file(file.path, true, 512, &with);
    index_file(file.path, false, 512, &without);
    CHECK(with.bytes == without.bytes);
  }
  std::string unclosed = "[{\"ph\":\"B\",\"pid\":1,\"tid\":1,\"ts\":1,\"name\":\"a\"},"
                         "{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":5},{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":9,\"dur\":3,\"name\":\"b\"}]";
  TempFile file(unclosed);
  Indexed without;
  index_file(file.path, false, 512, &without);
  CHECK(without.trace.unclosed_begins == 1);
  CHECK(without.trace.unmatched_ends == 1);
  CHECK(without.trace.duration_sum_ns == 3000 + 11000);
  CHECK_FALSE(without.index.ranges);
}

TEST_CASE("a truncated or damaged index is refused, never trusted") {
  TempFile file(lane_by_lane_trace());
  Indexed x;
  index_file(file.path, false, 256, &x);
  std::string why;
  for (std::size_t n = 0; n < x.bytes.size(); ++n) {
    TraceIndex back;
    CHECK_FALSE(parse_index(std::string_view(x.bytes).substr(0, n), &back, &why));
  }
  for (std::size_t at = 8; at < x.bytes.size(); at += 7) {
    std::string damaged = x.bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x5A);
    TraceIndex back;
    bool parsed = parse_index(damaged, &back, &why);
    // The identity fields are not in the payload's CRC: damage there parses, and the
    // index then describes another file (stale). Anywhere else it is refused.
    if (at >= 12 && at < 60) CHECK((parsed && !(back.identity == x.index.identity)));
    else CHECK_FALSE(parsed);
  }
  // An index of format 1 (its payload stored as it is) is another format's, not corrupt.
  std::string other_version = x.bytes;
  other_version[8] = 1;
  TraceIndex back;
  CHECK_FALSE(parse_index(other_version, &back, &why));
  CHECK(why.find("format 1") != std::string::npos);
  // A plain trace's payload is stored as it is (queries read it without inflating); a
  // compressed trace's deflated (its index stays small beside the .gz), and read back.
  auto raw_length = [](const std::string& bytes) {
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<uint8_t>(bytes[60 + i]);
    return n;
  };
  CHECK(raw_length(x.bytes) == x.bytes.size() - 80);
  TempFile gz(gzip_bytes(lane_by_lane_trace()));
  Indexed z;
  index_file(gz.path, false, 256, &z);
  CHECK(raw_length(z.bytes) > z.bytes.size() - 80);
  TraceIndex again;
  REQUIRE(parse_index(z.bytes, &again, &why));
  CHECK(serialize_index(again, again.skeleton) == z.bytes);
  for (std::size_t n = 0; n < z.bytes.size(); n += 5) CHECK_FALSE(parse_index(std::string_view(z.bytes).substr(0, n), &again, &why));
}

TEST_CASE("an index rewritten in place while it is read is refused or read, never a crash") {
  // A mapped index cut short under its reader killed it with SIGBUS at the first page past
  // the new end; an index is read, not mapped, so a reader sees short bytes and refuses them.
  std::string trace;
  for (int copy = 0; copy < 200; ++copy) trace += lane_by_lane_trace();  // ~200 x 180 events
  std::string events = "{\"traceEvents\":[\n";
  for (std::size_t at = 0; (at = trace.find("{\"ph\"", at)) != std::string::npos;) {
    std::size_t end = trace.find('\n', at);
    std::string line = trace.substr(at, end - at);
    if (line.back() != ',') line += ',';
    events += line + "\n";
    at = end;
  }
  events += "{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":7000,\"dur\":1,\"name\":\"wake\"}\n]}\n";
  TempFile file(events);
  Indexed x;
  index_file(file.path, false, 256, &x);
  REQUIRE(x.bytes.size() > 128 * 1024);  // pages enough to be cut under a reader
  std::string index_path = file.path + ".jqx";
  std::atomic<bool> done{false};
  std::thread rewriter([&] {
    while (!done) {
      int fd = ::open(index_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) break;
      for (std::size_t at = 0; at < x.bytes.size(); at += 4096)
        if (::write(fd, x.bytes.data() + at, std::min<std::size_t>(4096, x.bytes.size() - at)) < 0) break;
      ::close(fd);
    }
  });
  constexpr std::size_t kReads = 20000;  // with the mapping, a SIGBUS came within ~10,000
  std::size_t read_whole = 0, refused = 0;
  for (std::size_t i = 0; i < kReads; ++i) {
    std::string warning;
    if (read_fresh_index(*input_of(file.path), &warning)) ++read_whole;
    else ++refused;
  }
  done = true;
  rewriter.join();
  std::remove(index_path.c_str());
  CHECK(read_whole + refused == kReads);
}

TEST_CASE("a huge file where the index would be costs its header to refuse, not its size in memory") {
  TempFile file(lane_by_lane_trace());
  Indexed x;
  index_file(file.path, false, 256, &x);
  std::string index_path = file.path + ".jqx";
  auto peak_kb = [] {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
  };
  constexpr off_t kHuge = off_t{1} << 30;  // sparse: no disk, but 1 GiB of memory if read whole
  // Foreign bytes; then this trace's own header (its identity) with its length wrong.
  for (std::string head : {std::string("JUNK"), x.bytes.substr(0, 56)}) {
    int fd = ::open(index_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, head.data(), head.size()) == static_cast<ssize_t>(head.size()));
    REQUIRE(::ftruncate(fd, kHuge) == 0);
    ::close(fd);
    long before = peak_kb();
    std::string warning;
    CHECK_FALSE(read_fresh_index(*input_of(file.path), &warning));
    CHECK(warning.find("ignored") != std::string::npos);
    CHECK(peak_kb() - before < 64 * 1024);
  }
  std::remove(index_path.c_str());
}

TEST_CASE("an index is written under a fresh name and renamed: a planted symlink is never written through") {
  TempFile file(lane_by_lane_trace());
  TempFile victim("precious");
  std::string index_path = file.path + ".jqx";
  // The name a writer of `<index>.tmp<pid>` would have used, planted as a symlink.
  std::string planted = index_path + ".tmp" + std::to_string(::getpid());
  REQUIRE(::symlink(victim.path.c_str(), planted.c_str()) == 0);
  BlockRecorder recorder(256);
  LoadOptions load;
  load.tee = &recorder;
  Trace trace;
  std::string err;
  auto src = Source::open(file.path, &err);
  REQUIRE(src);
  ReadResult read = load_trace(*src, &trace, nullptr, load);
  std::string why;
  CHECK(write_index(*input_of(file.path), trace, read, recorder, {}, 1, &why) == index_path);
  std::ifstream in(victim.path);
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(kept == "precious");
  struct stat st {};
  REQUIRE(::stat(index_path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
  std::string warning;
  CHECK(read_fresh_index(*input_of(file.path), &warning));
  std::remove(planted.c_str());
  std::remove(index_path.c_str());
}

TEST_CASE("an index owned by another user than you and the trace is ignored, and no HOME means no cache") {
  TempFile file(lane_by_lane_trace());
  Indexed x;
  index_file(file.path, false, 256, &x);
  std::string index_path = file.path + ".jqx";
  {
    std::ofstream out(index_path, std::ios::binary);
    out << x.bytes;
  }
  std::string warning;
  CHECK(read_fresh_index(*input_of(file.path), &warning));
  if (::geteuid() == 0) {
    REQUIRE(::chown(index_path.c_str(), 12345, 12345) == 0);
    CHECK_FALSE(read_fresh_index(*input_of(file.path), &warning));
    CHECK(warning.find("owned by another user (uid 12345)") != std::string::npos);
  } else {
    MESSAGE("not root: an index of another owner cannot be made here; that check is skipped");
  }
  std::remove(index_path.c_str());
  // Without HOME (and XDG_CACHE_HOME) there is no cache to read or write: no shared /tmp one.
  std::string home = std::getenv("HOME") ? std::getenv("HOME") : "", xdg = std::getenv("XDG_CACHE_HOME") ? std::getenv("XDG_CACHE_HOME") : "";
  ::unsetenv("HOME");
  ::unsetenv("XDG_CACHE_HOME");
  std::vector<std::string> paths = index_paths_for_reading(file.path);
  if (!home.empty()) ::setenv("HOME", home.c_str(), 1);
  if (!xdg.empty()) ::setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
  CHECK(paths == std::vector<std::string>{file.path + ".jqx"});
}

TEST_CASE("blocks cover every event once, in file order, one pass or in parts") {
  std::string text = lane_by_lane_trace();
  TempFile file(text);
  for (unsigned threads : {1u, 3u}) {
    CAPTURE(threads);
    Indexed x;
    index_file(file.path, false, 300, &x, threads, 512);
    REQUIRE(x.index.blocks.size() > 10);
    EventIndex events;
    Trace t;
    LoadOptions load;
    load.spans = false;
    load.tee = &events;
    auto src = Source::from_string(text);
    load_trace(*src, &t, nullptr, load);
    std::size_t block = 0;
    events.for_each([&](const EventIndex::Entry& e) {
      while (block + 1 < x.index.blocks.size() && e.offset >= x.index.blocks[block].stop) ++block;
      const IndexBlock& b = x.index.blocks[block];
      CHECK((e.offset >= b.start && e.offset < b.stop));
      if (e.kind == EventIndex::kSpan)
        CHECK((b.has_time && b.lo_ns <= e.ts_ns && b.hi_ns >= e.ts_ns + e.dur_ns));
      if (e.kind == EventIndex::kMetadata) CHECK(b.has_metadata);
    });
    CHECK(x.index.blocks.back().stop == UINT64_MAX);
  }
}

TEST_CASE("the blocks a range needs, grafted on the skeleton, hold every span of the range as a full read") {
  std::string text = lane_by_lane_trace();
  Trace full;
  auto whole = Source::from_string(text);
  load_trace(*whole, &full, nullptr);
  for (bool gzipped : {false, true}) {
    CAPTURE(gzipped);
    TempFile file(gzipped ? gzip_bytes(text) : text);
    Indexed x;
    index_file(file.path, false, 300, &x);
    CHECK(x.index.compression == (gzipped ? Compression::gzip : Compression::none));
    for (Range range : {Range{0, 100}, Range{1'990'000, 2'990'000}, Range{2'500'000, 2'500'000},
                        Range{-5, 7'000'000}, Range{5'900'000, 9'000'000}}) {
      CAPTURE(range.lo);
      CAPTURE(range.hi);
      TraceIndex index;
      std::string why;
      REQUIRE(parse_index(x.bytes, &index, &why));
      std::vector<ByteRange> blocks;
      for (uint32_t b : index.blocks_for(range, false)) blocks.push_back({index.blocks[b].start, index.blocks[b].stop});
      if (range.lo > 0 && range.hi < 5'000'000) CHECK(blocks.size() < index.blocks.size());
      Trace partial;
      ReadResult r;
      LoadOptions load;
      Trace& skeleton = index.skeleton;
      if (!blocks.empty()) {
        REQUIRE(load_blocks(blocks, block_opener(input_of(file.path), index, blocks), 2, load, &partial, &r));
        graft_blocks(&skeleton, partial, 2);
      }
      CHECK(spans_in(skeleton, range) == spans_in(full, range));
      CHECK(skeleton.events == full.events);
    }
  }
}

TEST_CASE("a block that does not end where the index says is refused, and nothing reaches the tee") {
  std::string text = lane_by_lane_trace();
  for (bool gzipped : {false, true}) {
    CAPTURE(gzipped);
    TempFile file(gzipped ? gzip_bytes(text) : text);
    Indexed x;
    index_file(file.path, false, 300, &x);
    const IndexBlock& b = x.index.blocks[1];
    Trace partial;
    ReadResult r;
    std::vector<ByteRange> good{{b.start, b.stop}};
    CHECK(load_blocks(good, block_opener(input_of(file.path), x.index, good), 1, LoadOptions{}, &partial, &r));
    std::vector<ByteRange> off{{b.start, b.stop - 3}, {x.index.blocks[3].start, x.index.blocks[3].stop}};
    EventIndex events;
    LoadOptions load;
    load.tee = &events;
    Trace other;
    CHECK_FALSE(load_blocks(off, block_opener(input_of(file.path), x.index, off), 2, load, &other, &r));
    CHECK(events.size() == 0);
  }
}
